// The rate of the Marlin GEMM's wgmma K loop with nothing to load: a measured upper bound for the
// wgmma path (64- and 128-row work items) as it is built, for `moeval bench`.
//
// What runs: the kernel's own per-tile code (marlin_wgmma_tile: the lane's words read from its
// shared-memory ring slot, per group a wait for the MMA that last read its A fragment, the
// dequantization, the wgmma) over `k_tiles` K tiles per thread block, with the thread blocks per SM
// the kernel gets (its shared memory, 2 per SM on an H200) on every SM. What does not: copies from
// global memory, their waits and barriers, item bookkeeping, the epilogue. So the GEMM's rate on
// large-M cells over this rate says how much of the K loop's own rate the data movement and the
// rest cost; this rate over the dense bf16 rate, how much the dequantization per MMA costs.
#pragma once

#include <string>

#include "moeval/kernels/act_dtype.h"
#include "moeval/kernels/marlin_moe.h"

namespace moeval::kernels {

struct MarlinWgmmaRateArgs {
  ActDType dtype = ActDType::bf16;
  MarlinWeightType type = MarlinWeightType::uint4b8;  // symmetric or zero-point: the same K loop
  int rows = 64;          // work item height: 16, 32, 64 or 128 (the block size)
  int device = 0;
  int k_tiles = 4096;     // K tiles per thread block, 16 .. 2^20, a multiple of 16
  int repeats = 5;        // timed launches (median), 1 .. 1000
};

// Why the K loop cannot run on `device` (this build has no sm_90a code, or the device is not
// compute capability 9.0: the wgmma path cannot run there either), or empty when it can.
std::string marlin_wgmma_k_loop_unavailable(int device);

// FLOP/s (2·16·rows·columns per item and K tile) over the median launch. std::invalid_argument for
// arguments outside the ranges above (a device index included); std::runtime_error with
// marlin_wgmma_k_loop_unavailable's reason where it cannot run, or for a CUDA error.
double marlin_wgmma_k_loop_rate(const MarlinWgmmaRateArgs& args);

}  // namespace moeval::kernels
