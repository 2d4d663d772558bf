// Internal: the Marlin MoE GEMM for 8-row items (block_size 8, the decode path) where the tile
// columns do not fill a round of resident warps: a thread block of warps_k warps per column unit,
// K split among them in whole rounds, the partial sums added in shared memory in warp order.
//
// Column unit = one Marlin tile column of one moe block, or a pair of adjacent ones with two columns
// per warp (CW = 2: each K tile's activation words are copied, waited for and read once for both,
// see marlin_slice_kernel.cuh). Units are dealt round-robin to the thread blocks (persistent grid,
// column fastest), so the blocks running at one time read neighbouring tile columns.
//
// Why a kernel of its own rather than the 4-warp thread-block kernel: there a K split took the
// warps of one 128-thread block (1, 2 or 4 ways) and each warp one tile column. Here the block is
// as wide as the split, so a block of 2 or 4 warps can hold a column pair (12 warps an SM at two
// columns a warp) and the host picks the split for the unit count and K (plan_columns in
// marlin_moe.cu, fitted to a same-run sweep of every split on the H200's decode cells: its picks
// ran 1–9 % faster than the thread-block kernel on six of that kernel's seven cells, 1 % slower on
// the seventh).
// A split in shared memory costs one pass over the partial sums per unit; a split across warps of
// different blocks (the slice kernel) pays a pass through L2 and an arrival, which measured slower
// on these cells.
#pragma once

#include <cstdint>

#include "marlin_kernel.cuh"

namespace moeval::kernels::detail {

template <typename T, int BITS, QuantMode MODE, bool ROUND_GROUPS, int CW>
__global__ void __launch_bounds__(32 * marlin_column_max_warps(CW), 1) marlin_moe_column_kernel(const MarlinParams p) {
  using Tile = MarlinTile<BITS, 1, CW>;
  constexpr int kStages = Tile::kStages;
  constexpr int kWarpSmem = marlin_warp_smem_uint4<BITS, 1, CW>();
  extern __shared__ uint4 smem[];  // warps_k · kWarpSmem

  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int warps = static_cast<int>(blockDim.x) >> 5;  // p.warps_k
  uint4* warp_smem = smem + warp * kWarpSmem;

  const int column_units = p.n_tiles / CW;  // per moe block
  // The first unit's expert id and rows are read together with the block count: on a cold L2 each
  // is a DRAM round trip, and read one after the other they were three before the first weight
  // copy. Its moe block is below block_capacity (the grid is at most the capacity's units), so the
  // reads stay inside expert_ids and sorted_token_ids even where the block turns out unused.
  int expert = p.expert_ids[blockIdx.x / column_units];
  LaneRows<1> rows = lane_rows<1>(p, blockIdx.x / column_units * p.block_size, 8, lane);
  const std::int64_t units = marlin_block_count(p) * column_units;
  const int kt_begin = marlin_k_split(p.k_tiles, warps, warp, kStages);
  const int kt_end = marlin_k_split(p.k_tiles, warps, warp + 1, kStages);

  for (std::int64_t unit = blockIdx.x; unit < units; unit += gridDim.x) {
    const std::int64_t block = unit / column_units;
    const int nt = CW * static_cast<int>(unit - block * column_units);
    const std::int64_t row0 = block * p.block_size;
    if (unit != blockIdx.x) {
      expert = p.expert_ids[block];
      rows = lane_rows<1>(p, row0, 8, lane);
    }
    const bool computes = expert >= 0 && expert < p.num_experts;
    float acc[4 * CW][1][4];
#pragma unroll
    for (int wg = 0; wg < 4 * CW; ++wg) {
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[wg][0][j] = 0.0f;
    }
    if (computes && kt_begin < kt_end) {
      marlin_warp_k_range<T, BITS, 1, MODE, ROUND_GROUPS, CW>(acc, p, warp_smem, expert, rows, nt, kt_begin, kt_end, lane);
    }
    if (warps > 1) {
      // Each warp's partial sums go into its own drained ring (every lane's copies have landed once
      // the whole warp is past its last wait); warp 0 adds the others in warp order.
      if (warp > 0) {
        __syncwarp();
        float* mine = reinterpret_cast<float*>(warp_smem);
#pragma unroll
        for (int wg = 0; wg < 4 * CW; ++wg) {
#pragma unroll
          for (int j = 0; j < 4; ++j) mine[(wg * 4 + j) * 32 + lane] = acc[wg][0][j];
        }
      }
      __syncthreads();
      if (warp == 0) {
        for (int w = 1; w < warps; ++w) {
          const float* other = reinterpret_cast<const float*>(smem + w * kWarpSmem);
#pragma unroll
          for (int wg = 0; wg < 4 * CW; ++wg) {
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[wg][0][j] += other[(wg * 4 + j) * 32 + lane];
          }
        }
      }
      __syncthreads();  // the rings are refilled by the next unit
    }
    if (warp == 0) {
#pragma unroll
      for (int c = 0; c < CW; ++c) {
        store_marlin_sums<T, 1, 4>(p, row0, 8, 64 * (nt + c) + (lane >> 2), computes, lane & 3,
                                   [&](int wg, int tt, int j) { return acc[4 * c + wg][tt][j]; });
      }
    }
  }
}

template <typename T, int BITS, QuantMode MODE, int CW>
void launch_marlin_columns(const MarlinParams& params, cudaStream_t stream) {
  const int threads = 32 * params.warps_k;
  const std::size_t smem = static_cast<std::size_t>(params.warps_k) * marlin_warp_smem_uint4<BITS, 1, CW>() * sizeof(uint4);
  auto launch = [&](auto kernel) {
    launch_persistent(kernel, threads, params.block_capacity * (params.n_tiles / CW), params, stream, "marlin_moe", smem,
                      params.likely_items, params.max_grid);
  };
  if constexpr (MODE != QuantMode::k_shard) {
    if (marlin_round_groups(params, MarlinTile<BITS, 1, CW>::kStages)) {
      return launch(marlin_moe_column_kernel<T, BITS, MODE, true, CW>);
    }
  }
  launch(marlin_moe_column_kernel<T, BITS, MODE, false, CW>);
}

}  // namespace moeval::kernels::detail
