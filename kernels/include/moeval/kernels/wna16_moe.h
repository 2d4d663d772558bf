// wna16_moe: one MoE GEMM on the WNA16 (vLLM moe_wna16) weight layout, all experts in one launch.
//
//   C[sorted_id, n] = round16( w · Σ_k A[sorted_id / top_k, k] · W16[e, n, k] )
// for every valid sorted_id (< num_slots) of every block b < num_tokens_post_padded / B with
// e = expert_ids[b] ≥ 0, where w = topk_weights[sorted_id] when mul_topk_weights, else 1.
//
// Weights (device, per expert e contiguous):
//   qweight uint8 [E, N, K·bits/8], packed along K: 4-bit byte j of a row holds k = 2j in the low
//           nibble and k = 2j+1 in the high nibble; 8-bit byte k holds k.
//   scales  16-bit (activation dtype) [E, N, K/G]; G = K when channelwise (group_size = -1).
//   qzeros  optional uint8 [E, N·bits/8, K/G], packed along N (4-bit: even n in the low nibble);
//           TRUE zero points. Without qzeros the implicit zero is 8 (4-bit) / 128 (8-bit).
// Dequantization recipe (fixtures reproduce it bit for bit, DequantRecipe::sub_then_mul):
//   W16 = round_to_16bit((u - z)·s) with exactly one rounding (u - z is an exact small integer,
//   the product is exact in fp32, round-to-nearest-even to fp16/bf16).
// Accumulation: fp32 (tensor-core mma.sync with fp32 accumulators; each product a·W16 is exact).
// Epilogue: the fp32 sum is multiplied by the fp32 routing weight (if any) and rounded ONCE.
// Rows of blocks whose expert is -1 are written as zeros (an expert id ≥ E is a caller bug: it is
// never dereferenced and its rows are written as zeros too). Padding ids (≥ num_slots) are never
// loaded or stored. Deterministic: no atomics, fixed reduction order, bitwise identical on repeat.
//
// Supported (std::invalid_argument otherwise, naming the argument and the allowed values):
//   bits ∈ {4, 8}; group_size ∈ {32, 64, 128} or -1 (channelwise), K % group_size == 0;
//   K % 32 == 0 (4-bit) / K % 16 == 0 (8-bit); N % 16 == 0; B ∈ {8, 16, 32, 48, 64, 128};
//   16-byte aligned qweight and A; every pointer on one device (the launch goes to that device).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "moeval/kernels/act_dtype.h"
#include "moeval/kernels/moe_gemm_types.h"

namespace moeval::kernels {

// The quantized expert weights of one GEMM (w13 or w2) in WNA16 layout.
struct Wna16Weights {
  const std::uint8_t* qweight = nullptr;  // [E, N, K·bits/8]
  const void* scales = nullptr;           // [E, N, K/G], activation dtype
  const std::uint8_t* qzeros = nullptr;   // optional [E, N·bits/8, K/G]
  int num_experts = 0;                    // E (local experts on this device)
  int bits = 4;                           // 4 or 8
  int group_size = 128;                   // 32, 64, 128 or -1 (channelwise)
};

struct Wna16MoeArgs {
  const void* a = nullptr;  // [T / top_k, K] activation dtype, row-major
  void* c = nullptr;        // [T, N] activation dtype, row = sorted_id
  Wna16Weights weights;
  MoeBlocks blocks;
  GemmNK shape;
  int top_k = 1;  // A row = sorted_id / top_k (GEMM1: topk, GEMM2: 1)
  ActDType dtype = ActDType::bf16;
  const float* topk_weights = nullptr;  // [T] flat [M, topk]; required when mul_topk_weights
  bool mul_topk_weights = false;
  cudaStream_t stream = nullptr;
};

// Scratch bytes wna16_moe needs for these arguments (currently 0: the K split, when used, is
// reduced inside a thread block in a fixed order, so no global workspace).
std::size_t wna16_moe_workspace_bytes(const Wna16MoeArgs& args);

// Throws std::invalid_argument for unsupported input, std::runtime_error for CUDA failures.
void wna16_moe(const Wna16MoeArgs& args);

}  // namespace moeval::kernels
