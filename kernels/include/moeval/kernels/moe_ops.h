// Elementwise MoE steps around the GEMMs.
//
// silu_and_mul: in [rows, 2I] → out [rows, I]; gate g = in[:, j], up u = in[:, I + j];
//   out = round16(silu(g)·u) computed in fp32 from the 16-bit inputs, silu(z) = z / (1 + exp(-z)).
// topk_combine: in [M·topk, H] → out [M, H]; out[m] = round16(Σ_j in[m·topk + j]), summed in fp32
//   in ascending j (deterministic). With topk_ids given, slots whose id is outside [0, E) are
//   skipped (moe_align drops them, so no GEMM ever wrote their rows).
// Both are asynchronous on `stream`, launch on the device of their buffers, and throw
// std::invalid_argument for null/foreign pointers or non-positive sizes.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "moeval/kernels/act_dtype.h"

namespace moeval::kernels {

struct SiluAndMulArgs {
  const void* in = nullptr;  // [rows, 2·inter]
  void* out = nullptr;       // [rows, inter]
  std::int64_t rows = 0;
  std::int64_t inter = 0;    // I
  ActDType dtype = ActDType::bf16;
  cudaStream_t stream = nullptr;
};

struct TopkCombineArgs {
  const void* in = nullptr;  // [M·topk, H]
  void* out = nullptr;       // [M, H]
  std::int64_t tokens = 0;   // M
  int topk = 1;
  std::int64_t hidden = 0;   // H
  ActDType dtype = ActDType::bf16;
  const std::int32_t* topk_ids = nullptr;  // optional [M·topk]: skip slots with ids outside [0, E)
  int num_experts = 0;                     // E, required with topk_ids
  cudaStream_t stream = nullptr;
};

void silu_and_mul(const SiluAndMulArgs& args);
void topk_combine(const TopkCombineArgs& args);

}  // namespace moeval::kernels
