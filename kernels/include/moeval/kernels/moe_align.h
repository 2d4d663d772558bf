// moe_align: routing (topk_ids) → the block-sorted token order every MoE GEMM consumes.
//
// Let T = M·topk (number of "slots"), flat slot index i = m·topk + j, B = block size,
// cnt_e = #{i : topk_ids[i] = e}, pad_e = ceil(cnt_e / B)·B, off_e = Σ_{e' < e} pad_e'.
// Outputs (all int32, device):
//   sorted_token_ids [moe_align_sorted_capacity(T, E, B)]: for every counted slot i of expert e,
//     i sits in [off_e, off_e + cnt_e), in ASCENDING order of i (deterministic, so the sorted ids
//     are bitwise reproducible); every other entry (segment padding and everything at or past
//     num_tokens_post_padded) holds the padding value T.
//   expert_ids [moe_align_block_capacity(T, E, B)]: block b < num_tokens_post_padded / B holds the
//     expert owning that block, mapped through expert_map when given (mapped local id, or -1 for a
//     non-local expert; GEMMs write zeros for -1 blocks). Blocks at or past the total hold -1.
//   num_tokens_post_padded [1]: Σ_e pad_e (experts without slots contribute 0).
// Ids outside [0, E) are not counted: they appear nowhere in the output (so a caller may mark
// dropped slots with -1); their rows are simply never computed.
//
// Limits: 1 ≤ E ≤ 65536; B ∈ {8, 16, 32, 48, 64, 128}; T ≥ 0 and T + E·(B-1) < 2^31 (ids are int32;
// all index math inside is int64). The call is asynchronous on `stream` and launches on the device
// that owns the buffers (all must live on one device).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace moeval::kernels {

// Block sizes every kernel here accepts.
bool is_supported_block_size(int block_size);

// Length of sorted_token_ids: the worst case T + E·(B-1). Throws std::invalid_argument for
// unsupported E, B, or when the result does not fit int32.
std::int64_t moe_align_sorted_capacity(std::int64_t num_slots, int num_experts, int block_size);
// Length of expert_ids: sorted capacity / B, rounded up.
std::int64_t moe_align_block_capacity(std::int64_t num_slots, int num_experts, int block_size);
// Scratch bytes moe_align needs (may be 0; pass any non-null pointer or nullptr then).
std::size_t moe_align_workspace_bytes(std::int64_t num_slots, int num_experts);

struct MoeAlignArgs {
  const std::int32_t* topk_ids = nullptr;      // [num_slots], flat [M, topk]
  std::int64_t num_slots = 0;                  // T = M·topk
  int num_experts = 0;                         // E (global experts; ids index expert_map)
  int block_size = 16;                         // B
  const std::int32_t* expert_map = nullptr;    // optional [E]: global → local id or -1 (EP)
  std::int32_t* sorted_token_ids = nullptr;    // [moe_align_sorted_capacity]
  std::int32_t* expert_ids = nullptr;          // [moe_align_block_capacity]
  std::int32_t* num_tokens_post_padded = nullptr;  // [1]
  void* workspace = nullptr;                   // moe_align_workspace_bytes, 256-byte aligned
  std::size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
};

// Throws std::invalid_argument (what, which argument, what is allowed) for bad arguments,
// std::runtime_error when a CUDA call fails.
void moe_align(const MoeAlignArgs& args);

}  // namespace moeval::kernels
