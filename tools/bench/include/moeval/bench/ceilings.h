// The two ceilings of the roofline, measured in the same run as the kernels (METHOD.md): device
// copy bandwidth (cudaMemcpy device→device, bytes read + written) and the dense bf16 matrix rate
// (a large cublasGemmEx, bf16 in, fp32 compute) on random data. Beside them, not a ceiling of the
// hardware but of our design: the rate of the Marlin GEMM's wgmma K loop with nothing to load
// (marlin_wgmma_k_loop_rate, bf16 uint4b8), which bounds what its large-M cells can reach.
#pragma once

#include <string>

#include "moeval/bench/event_timer.h"

namespace moeval::bench {

struct Ceilings {
  double copy_bytes_per_s = 0;    // HBM bandwidth
  double dense_flops_per_s = 0;   // bf16 tensor-core rate
  double marlin_k_loop_64 = 0;    // FLOP/s of the wgmma K loop alone, 64-row items (0: not measured)
  double marlin_k_loop_128 = 0;   // the same, 128-row items
  double marlin_k_loop_16 = 0;    // the same, 16-row items
  double marlin_k_loop_32 = 0;    // the same, 32-row items
  std::string marlin_k_loop_skipped;  // why the K loop was not measured, or empty
  double empty_kernel_s = 0;      // an empty kernel timed as the cells are (flush, events): the floor of a cell
};

// Medians over `repeats` timed runs after warm-up, on the current device, each after an L2 flush of
// the given kind.
Ceilings measure_ceilings(int repeats, L2Flush flush);

}  // namespace moeval::bench
