// moe_align for large problems: a histogram per (expert, tile of slots) turns the stable counting
// sort into independent per-tile walks, so M·topk can reach 2^24 and beyond with E in the
// thousands, without O(E²) or O(E·T) memory.
#include <algorithm>

#include "../common/block_scan.cuh"
#include "align_expert_scan.cuh"
#include "align_kernels.h"
#include "moeval/kernels/device_info.h"

namespace moeval::kernels::detail {
namespace {

constexpr int kThreads = 256;
// The histogram has E·tiles entries; tiles are made long enough to keep it within 2^22 ints.
constexpr std::int64_t kMaxHistogramEntries = std::int64_t{1} << 22;
constexpr std::int64_t kMinTileLen = 1024;

std::size_t round_up_256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

struct TiledWorkspace {
  int* hist;     // [E][tiles]: count, then exclusive prefix over tiles, then running cursor
  int* totals;   // [E] slots per expert
  int* offsets;  // [E] padded offset of each expert
};

TiledWorkspace carve(void* workspace, int num_experts, std::int64_t tiles) {
  char* p = static_cast<char*>(workspace);
  TiledWorkspace ws{};
  ws.hist = reinterpret_cast<int*>(p);
  p += round_up_256(sizeof(int) * static_cast<std::size_t>(num_experts) * static_cast<std::size_t>(tiles));
  ws.totals = reinterpret_cast<int*>(p);
  p += round_up_256(sizeof(int) * static_cast<std::size_t>(num_experts));
  ws.offsets = reinterpret_cast<int*>(p);
  return ws;
}

__global__ void fill_and_count_kernel(AlignInputs in, AlignOutputs out, int* hist, AlignTiling tiling) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < out.sorted_capacity) out.sorted_token_ids[j] = static_cast<int>(in.num_slots);
  if (j < in.num_slots) {
    const int e = in.topk_ids[j];
    if (e >= 0 && e < in.num_experts) atomicAdd(&hist[static_cast<std::int64_t>(e) * tiling.tiles + j / tiling.tile_len], 1);
  }
}

// One block per expert: exclusive prefix of its counts over tiles, in place; total → totals[e].
__global__ void scan_tiles_kernel(int* hist, int* totals, std::int64_t tiles) {
  __shared__ int scratch[32];
  int* row = hist + static_cast<std::int64_t>(blockIdx.x) * tiles;
  int carry = 0;
  for (std::int64_t base = 0; base < tiles; base += blockDim.x) {
    const std::int64_t t = base + threadIdx.x;
    const int count = t < tiles ? row[t] : 0;
    int chunk_total = 0;
    const int prefix = block_exclusive_scan(count, scratch, &chunk_total);
    if (t < tiles) row[t] = carry + prefix;
    carry += chunk_total;
  }
  if (threadIdx.x == 0) totals[blockIdx.x] = carry;
}

__global__ void __launch_bounds__(1024) scan_experts_kernel(AlignInputs in, AlignOutputs out, const int* totals,
                                                            int* offsets) {
  scan_experts(in, out, totals, offsets);
}

// One warp per tile walks its slots in order (the histogram row entries are its cursors).
__global__ void rank_tiles_kernel(AlignInputs in, AlignOutputs out, int* hist, const int* offsets,
                                  AlignTiling tiling) {
  const std::int64_t tile = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (tile >= tiling.tiles) return;  // whole warps leave together
  const std::int64_t begin = tile * tiling.tile_len;
  const std::int64_t end = std::min(in.num_slots, begin + tiling.tile_len);
  rank_slots_in_order(in, out, in.topk_ids + begin, begin, end, offsets, hist + tile, tiling.tiles);
}

unsigned grid_for(std::int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

}  // namespace

AlignTiling align_tiling(std::int64_t num_slots, int num_experts) {
  const std::int64_t by_memory = (num_slots * num_experts + kMaxHistogramEntries - 1) / kMaxHistogramEntries;
  const std::int64_t tile_len = (std::max(kMinTileLen, by_memory) + 31) / 32 * 32;
  return {tile_len, std::max<std::int64_t>(1, (num_slots + tile_len - 1) / tile_len)};
}

std::size_t align_tiled_workspace_bytes(std::int64_t num_slots, int num_experts) {
  const AlignTiling tiling = align_tiling(num_slots, num_experts);
  const std::size_t e = static_cast<std::size_t>(num_experts);
  return round_up_256(sizeof(int) * e * static_cast<std::size_t>(tiling.tiles)) + 2 * round_up_256(sizeof(int) * e);
}

void launch_align_tiled(const AlignInputs& in, const AlignOutputs& out, void* workspace, cudaStream_t stream) {
  const AlignTiling tiling = align_tiling(in.num_slots, in.num_experts);
  const TiledWorkspace ws = carve(workspace, in.num_experts, tiling.tiles);
  const std::size_t hist_bytes = sizeof(int) * static_cast<std::size_t>(in.num_experts) * static_cast<std::size_t>(tiling.tiles);
  check_cuda(cudaMemsetAsync(ws.hist, 0, hist_bytes, stream), "moe_align: clearing the histogram");
  fill_and_count_kernel<<<grid_for(std::max(out.sorted_capacity, in.num_slots)), kThreads, 0, stream>>>(in, out, ws.hist,
                                                                                                          tiling);
  check_cuda(cudaGetLastError(), "moe_align: fill/count launch");
  scan_tiles_kernel<<<static_cast<unsigned>(in.num_experts), kThreads, 0, stream>>>(ws.hist, ws.totals, tiling.tiles);
  check_cuda(cudaGetLastError(), "moe_align: tile scan launch");
  scan_experts_kernel<<<1, 1024, 0, stream>>>(in, out, ws.totals, ws.offsets);
  check_cuda(cudaGetLastError(), "moe_align: expert scan launch");
  rank_tiles_kernel<<<grid_for(tiling.tiles * 32), kThreads, 0, stream>>>(in, out, ws.hist, ws.offsets, tiling);
  check_cuda(cudaGetLastError(), "moe_align: rank launch");
}

}  // namespace moeval::kernels::detail
