// Internal: the two implementations behind moe_align (one thread block for small problems, a
// tiled multi-kernel pass for large ones). Both produce the identical, fully specified output.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace moeval::kernels::detail {

struct AlignInputs {
  const std::int32_t* topk_ids;
  std::int64_t num_slots;  // T
  int num_experts;         // E
  int block_size;          // B
  const std::int32_t* expert_map;  // optional
};

struct AlignOutputs {
  std::int32_t* sorted_token_ids;
  std::int32_t* expert_ids;
  std::int32_t* num_tokens_post_padded;
  std::int64_t sorted_capacity;
  std::int64_t block_capacity;
};

// Single block: ids and per-expert cursors in shared memory, one warp ranks the slots in order.
bool align_fits_single_block(std::int64_t num_slots, int num_experts);
void launch_align_single_block(const AlignInputs& in, const AlignOutputs& out, cudaStream_t stream);

// Tiled: the slots are cut into tiles of tile_len; a histogram hist[e][tile] gives each
// (expert, tile) its base position, and one warp per tile ranks its slots in order.
struct AlignTiling {
  std::int64_t tile_len;
  std::int64_t tiles;
};
AlignTiling align_tiling(std::int64_t num_slots, int num_experts);
std::size_t align_tiled_workspace_bytes(std::int64_t num_slots, int num_experts);
void launch_align_tiled(const AlignInputs& in, const AlignOutputs& out, void* workspace, cudaStream_t stream);

}  // namespace moeval::kernels::detail
