// Internal: what the host hands the WNA16 MoE GEMM kernel, and the launchers per dtype × bits.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "moeval/kernels/wna16_moe.h"

namespace moeval::kernels::detail {

struct Wna16Params {
  const std::uint16_t* a;        // [T / top_k, K]
  std::uint16_t* c;              // [T, N]
  const std::uint8_t* qweight;   // [E, N, row_bytes]
  const std::uint16_t* scales;   // [E, N, groups]
  const std::uint8_t* qzeros;    // optional [E, N·bits/8, groups]
  const float* topk_weights;     // [T]; null unless the epilogue multiplies
  const std::int32_t* sorted_token_ids;
  const std::int32_t* expert_ids;
  const std::int32_t* num_tokens_post_padded;
  std::int64_t n;
  std::int64_t k;
  std::int64_t row_bytes;        // K·bits/8
  std::int64_t num_slots;        // T
  std::int64_t block_capacity;   // whole blocks inside sorted_capacity: no block index reaches past it
  int groups;                    // K / G
  int group_shift;               // k >> group_shift = group (G is a power of two; 31 when channelwise)
  int num_experts;
  int top_k;
  int block_size;                // B
  int row_groups;                // a block's rows are split in groups of 8·token_tiles rows
  int n_tiles;                   // ceil(N / (16·warps_n))
  int warps_k;                   // warps splitting K inside a thread block (1, 2 or 4)
  std::uint32_t implicit_zero;   // 8 or 128 when qzeros is null
};

// 16-row weight tiles per warp: 2 for 4-bit items of 8, 16 or 32 rows, else 1. Why: a warp reads
// 2 KiB of activations (L1/L2) per KiB of weights per 8 rows of the item (8 KiB at 32 rows); with
// two tiles each activation load serves twice the weights. H200: DeepSeek-V3 w13 M = 16/64, 8-row
// items: 590 → 514 µs, 1333 → 1152 µs; M = 256, 16-row items: w13 2541 → 1946 µs, w2 1344 →
// 1007 µs; 32-row items: Mixtral M = 64 613 → 369 µs, Qwen3 M = 256 269 → 186 µs. (48- and 64-row
// items already need 212–246 registers with one tile.) The host sizes N tiles with it.
constexpr int wna16_row_tiles(int bits, int token_tiles) { return bits == 4 && token_tiles <= 4 ? 2 : 1; }

// Warps (1, 2 or 4) splitting K inside a thread block (host side; kernels/tests/host checks its
// thresholds): doubled while the likely (block, N tile) items times warps_k leave SMs idle and
// every warp keeps ≥ 1 of ≥ 4·warps_k chunks.
int choose_warps_k(const Wna16MoeArgs& args, std::int64_t block_capacity, std::int64_t row_groups, int row_tiles,
                   int sms);

// Launches one persistent grid; token_tiles = rows per item / 8 (1, 2, 4, 6 or 8).
template <typename T, int BITS>
void launch_wna16(const Wna16Params& params, int token_tiles, cudaStream_t stream);

}  // namespace moeval::kernels::detail
