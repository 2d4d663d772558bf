// Internal: the timed launches behind marlin_wgmma_k_loop_rate (the kernel is sm_90a code, in
// sm90a/marlin_wgmma_rate.cu; the argument and device checks are in marlin_wgmma_rate.cu).
#pragma once

namespace moeval::kernels::detail {

struct KLoopTiming {
  double seconds = 0;  // median launch
  double flops = 0;    // of one launch
};

// On the current device: one warm-up launch, then `repeats` timed ones; rows 16, 32, 64 or 128.
template <typename T, int BITS>
KLoopTiming time_marlin_wgmma_k_loop(int rows, int k_tiles, int repeats);

}  // namespace moeval::kernels::detail
