// moe_forward: the whole quantized MoE layer on WNA16 or Marlin weights.
//
//   align(topk_ids, B) → GEMM1 (w13: K = H, N = 2I, top_k = topk, no routing weight)
//   → silu_and_mul → GEMM2 (w2: K = I, N = H, top_k = 1, × topk_weights) → topk_combine.
// Output out [M, H] = round16(Σ_j round16(w_j · y_{e_j})) as the stages above define it.
// Block size heuristic (when block_size = 0), on p = M·topk / E tokens per expert: on WNA16 weights
// 8 for p < 7.2, 16 for p < 20.8, 32 for p < 41.6, else 64 — so a block holds about the tokens one
// expert receives (decode: 8; a little more than a block's worth goes to two smaller blocks rather
// than one mostly-padding larger one, measured faster) and padding stays below E·(B-1) rows; on
// Marlin weights 8 for p < 7.2, 16 for p < 13.6, 32 for p < 27.2, 64 for p < 512, else 128 (the
// wgmma path's 32-row items and its producer form's 64- and 128-row ones), or 8 for p < 7.2, 16
// for p < 17.6, 32 for p < 36.8, else 64 where GEMM1's items run on mma.sync (act-order with a K
// shard in w13, or a device without the wgmma path: marlin_layer_wgmma_items). Both GEMMs run on
// one weight format, chosen by `format`: wna16_moe on Wna16Weights, or marlin_moe on
// MarlinMoeWeights (act-order, is_k_full, zero points as kernels/marlin_moe.h states; N = 2I and H
// must be multiples of 64 there).
// The workspace holds the align output, the intermediates and, on Marlin weights, what
// marlin_moe_workspace_bytes asks for: the activations gathered through perm with act-order, the
// K-slice space with block_size 8, the item counter with 64 and 128 (one region, reused by GEMM2:
// the GEMMs run in order on one stream); size it with moe_forward_workspace_bytes(args).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "moeval/kernels/act_dtype.h"
#include "moeval/kernels/marlin_moe.h"
#include "moeval/kernels/wna16_moe.h"

namespace moeval::kernels {

struct MoeLayerShape {
  std::int64_t tokens = 0;  // M
  std::int64_t hidden = 0;  // H
  std::int64_t inter = 0;   // I
  int num_experts = 0;      // E global experts: topk_ids range; expert_map (if any) has E entries
  int topk = 1;
};

// The block size moe_forward uses for this shape when none is given (documented above): this one
// for WNA16 weights; Marlin weights have two tables of their own: one where their items of 16 rows
// and more run on the wgmma path (`wgmma_items`), one where they run on mma.sync. The
// two-argument form takes the wgmma table.
int choose_block_size(const MoeLayerShape& shape);
int choose_block_size(const MoeLayerShape& shape, MoeWeightFormat format);
int choose_block_size(const MoeLayerShape& shape, MoeWeightFormat format, bool wgmma_items);

// Whether a Marlin layer's items of 16 rows and more run on the wgmma path on `device`, judged by
// GEMM1 (w13), which holds two thirds of the layer's multiply-adds: true where the device runs the
// path (a build with sm_90a code, a compute capability 9.0 device) and w13 is no K shard (act-order
// with is_k_full = false runs on mma.sync). Only w13's act_order and is_k_full are read.
bool marlin_layer_wgmma_items(const MarlinMoeWeights& w13, int device);


struct MoeForwardArgs {
  MoeLayerShape shape;
  const void* hidden_states = nullptr;   // [M, H]
  const std::int32_t* topk_ids = nullptr;  // [M, topk]
  const float* topk_weights = nullptr;   // [M, topk]
  const std::int32_t* expert_map = nullptr;  // optional [E] (global → local or -1)
  MoeWeightFormat format = MoeWeightFormat::wna16;
  Wna16Weights w13;  // format wna16: [E_local, 2I, H·bits/8]; E_local = E without expert_map
  Wna16Weights w2;   // format wna16: [E_local, H, I·bits/8]
  MarlinMoeWeights marlin_w13;  // format marlin: K = H, N = 2I (gate columns first)
  MarlinMoeWeights marlin_w2;   // format marlin: K = I, N = H
  void* out = nullptr;                   // [M, H]
  ActDType dtype = ActDType::bf16;
  int block_size = 0;                    // 0 = choose_block_size(shape, format)
  void* workspace = nullptr;             // moe_forward_workspace_bytes, 256-byte aligned
  std::size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
};

// Bytes of workspace for these arguments (shape, block_size, format and, for Marlin, the weights'
// act-order flags; pointers are not read): 256-byte-rounded regions for moe_align's scratch and
// output, GEMM1's output [M·topk, 2I], silu_and_mul's [M·topk, I], GEMM2's [M·topk, H], and on
// Marlin weights max(marlin_moe_workspace_bytes of GEMM1, of GEMM2): M·topk·K·2 bytes each with
// act-order, plus kMarlinSliceWorkspaceBytes with block_size 8, kMarlinItemCounterBytes with
// block_size 64 and 128, or the last round's arrival words and split slots with block_size 32
// (marlin_moe.h). With block_size 0 on Marlin weights: the larger of the sizes for the two
// block sizes the heuristic may pick (wgmma or mma.sync table), so the size does not depend on the
// device.
std::size_t moe_forward_workspace_bytes(const MoeForwardArgs& args);
// The same for WNA16 weights from the shape and block size alone (0 = the heuristic's choice).
std::size_t moe_forward_workspace_bytes(const MoeLayerShape& shape, int block_size = 0);

// The block size moe_forward(args) runs with when its buffers are on `device`: args.block_size where
// given, else choose_block_size(shape, format, wgmma_items) with marlin_layer_wgmma_items(w13, device)
// on Marlin weights.
int moe_forward_block_size(const MoeForwardArgs& args, int device);

// Throws std::invalid_argument for bad input (shapes, pointers, workspace too small),
// std::runtime_error for CUDA failures.
void moe_forward(const MoeForwardArgs& args);

}  // namespace moeval::kernels
