// moe_forward: the whole quantized MoE layer on WNA16 weights.
//
//   align(topk_ids, B) → GEMM1 (w13: K = H, N = 2I, top_k = topk, no routing weight)
//   → silu_and_mul → GEMM2 (w2: K = I, N = H, top_k = 1, × topk_weights) → topk_combine.
// Output out [M, H] = round16(Σ_j round16(w_j · y_{e_j})) as the stages above define it.
// Block size heuristic (when block_size = 0): the smallest B in {8, 16, 32, 48, 64} with
// M·topk / E < 0.9·B, else 64 — so a block holds about the tokens one expert receives (decode:
// 8) and padding stays below E·(B-1) rows. The workspace holds the align output and the
// intermediates; size it with moe_forward_workspace_bytes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "moeval/kernels/act_dtype.h"
#include "moeval/kernels/wna16_moe.h"

namespace moeval::kernels {

struct MoeLayerShape {
  std::int64_t tokens = 0;  // M
  std::int64_t hidden = 0;  // H
  std::int64_t inter = 0;   // I
  int num_experts = 0;      // E global experts: topk_ids range; expert_map (if any) has E entries
  int topk = 1;
};

// The block size moe_forward uses for this shape when none is given (documented above).
int choose_block_size(const MoeLayerShape& shape);

struct MoeForwardArgs {
  MoeLayerShape shape;
  const void* hidden_states = nullptr;   // [M, H]
  const std::int32_t* topk_ids = nullptr;  // [M, topk]
  const float* topk_weights = nullptr;   // [M, topk]
  const std::int32_t* expert_map = nullptr;  // optional [E] (global → local or -1)
  Wna16Weights w13;  // [E_local, 2I, H·bits/8]; E_local = E without expert_map
  Wna16Weights w2;   // [E_local, H, I·bits/8]
  void* out = nullptr;                   // [M, H]
  ActDType dtype = ActDType::bf16;
  int block_size = 0;                    // 0 = choose_block_size(shape)
  void* workspace = nullptr;             // moe_forward_workspace_bytes, 256-byte aligned
  std::size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
};

// Bytes of workspace for this shape and block size (0 = the heuristic's choice).
std::size_t moe_forward_workspace_bytes(const MoeLayerShape& shape, int block_size = 0);

// Throws std::invalid_argument for bad input (shapes, pointers, workspace too small),
// std::runtime_error for CUDA failures.
void moe_forward(const MoeForwardArgs& args);

}  // namespace moeval::kernels
