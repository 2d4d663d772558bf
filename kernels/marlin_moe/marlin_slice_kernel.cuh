// Internal: the Marlin MoE GEMM for 8-row items (block_size 8, the decode path), one warp per tile
// column (or per pair of tile columns), with K split across warps where the columns alone cannot
// fill the GPU.
//
// Two columns per warp (CW = 2, MarlinParams::warp_columns): the warp copies, waits for and reads
// each K tile's activation words once for both columns, and its two columns' dequantization and
// MMAs interleave; the cost is 3 thread blocks per SM instead of 5 (twice the weight and scale
// slots, 145–168 registers). Below, "column" then means a pair. plan_slices says where it runs.
//
// Why a kernel of its own: an 8-row item's warps never exchange data (each lane copies its own
// weights and activation words), so a warp can take work on its own. Work unit = (moe block, tile
// column, K slice), dealt round-robin to all warps of the grid, tile column fastest, so the warps
// running at one time read neighbouring tile columns of the same K bands (DRAM pages stay open).
//
// K slices: with C tile columns (blocks × N/64) and W warps, the first ⌊C/W⌋·W columns go out whole
// in full rounds; the remaining R = C mod W columns (all C when C < W, the decode case) are each
// split into S = min(max_slices, ⌊W/R⌋) K slices, so the last round has R·S ≤ W units instead of R
// warps streaming whole columns while the rest of the GPU idles. A slice's fp32 sums go to its own
// workspace slot; the warp that arrives last at its column (an arrival counter per column) adds the
// S slots in slice order and stores the outputs. Fixed order, so the result does not depend on
// which warp arrives last: bitwise equal on repeat.
//
// Arrival counters are 64-bit words (call stamp << 32 | arrivals) in the caller's workspace. A word
// whose stamp is not this call's counts as zero arrivals, so the workspace needs no clearing (a test
// fills it with random bytes; call_stamp in marlin_params.h says which leftovers can never match);
// the last arrival writes 0, so a replayed CUDA graph (the same stamp again) starts from zero too.
#pragma once

#include <cstdint>

#include "marlin_kernel.cuh"

namespace moeval::kernels::detail {

// Registers the lane's sums (acc[wg][0][j]) in slice `slice` of `slices` of tail column `column`
// (< columns_in_tail; with CW = 2 a column is a pair of tile columns) and, in the warp that
// completes the column, replaces them by the sum of all slices in slice order. Returns whether this
// warp completed the column (and so stores it).
template <int CW>
__device__ inline bool marlin_add_slices(float (&acc)[4 * CW][1][4], const MarlinParams& p, int column, int columns_in_tail,
                                         int slice, int slices, int lane) {
  // Slot of unit (slice, column) = its index in the tail: slice · columns_in_tail + column, CW
  // workspace slots of 128 float4 each.
  constexpr int kSlot = 128 * CW;
  float4* slots = reinterpret_cast<float4*>(p.slice_partials);
  float4* mine = slots + (slice * columns_in_tail + column) * kSlot;
#pragma unroll
  for (int wg = 0; wg < 4 * CW; ++wg) {
    __stcg(mine + 32 * wg + lane, make_float4(acc[wg][0][0], acc[wg][0][1], acc[wg][0][2], acc[wg][0][3]));
  }
  __threadfence();  // the slot is visible GPU-wide before the arrival that announces it
  __syncwarp();
  unsigned arrived = 0;
  if (lane == 0) arrived = stamped_arrival(p.slice_arrivals + column, p.call_stamp);
  arrived = __shfl_sync(0xFFFFFFFFu, arrived, 0);
  if (arrived != static_cast<unsigned>(slices - 1)) return false;
  __threadfence();  // every other slot was written before its arrival; read them after ours
  // Two slices' slots in flight per step (the loads are independent, the adds stay in slice order).
  const float4* first = slots + column * kSlot + lane;
  const int stride = columns_in_tail * kSlot;  // float4 from one slice's slot of this column to the next
  float4 sum[4 * CW];
#pragma unroll
  for (int wg = 0; wg < 4 * CW; ++wg) sum[wg] = __ldcg(first + 32 * wg);
  for (int s = 1; s < slices; s += 2) {
    const bool second = s + 1 < slices;
    float4 v[2][4 * CW];
#pragma unroll
    for (int wg = 0; wg < 4 * CW; ++wg) {
      v[0][wg] = __ldcg(first + s * stride + 32 * wg);
      v[1][wg] = second ? __ldcg(first + (s + 1) * stride + 32 * wg) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (h == 1 && !second) break;
#pragma unroll
      for (int wg = 0; wg < 4 * CW; ++wg) {
        sum[wg].x += v[h][wg].x;
        sum[wg].y += v[h][wg].y;
        sum[wg].z += v[h][wg].z;
        sum[wg].w += v[h][wg].w;
      }
    }
  }
#pragma unroll
  for (int wg = 0; wg < 4 * CW; ++wg) {
    acc[wg][0][0] = sum[wg].x;
    acc[wg][0][1] = sum[wg].y;
    acc[wg][0][2] = sum[wg].z;
    acc[wg][0][3] = sum[wg].w;
  }
  if (lane == 0) p.slice_arrivals[column] = 0;  // all slices arrived: nothing else touches the word this call
  return true;
}

// CW: Marlin tile columns per warp (1 or 2; 2 needs n_tiles even): a unit's "column" is then a pair.
template <typename T, int BITS, QuantMode MODE, bool ROUND_GROUPS, int CW>
__global__ void __launch_bounds__(kMarlinThreads, marlin_slice_resident_blocks(CW)) marlin_moe_slice_kernel(const MarlinParams p) {
  using Tile = MarlinTile<BITS, 1, CW>;
  constexpr int kStages = Tile::kStages;
  constexpr int kWarpSmem = marlin_warp_smem_uint4<BITS, 1, CW>();
  extern __shared__ uint4 smem[];  // 4 · kWarpSmem (marlin_smem_bytes)

  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  uint4* warp_smem = smem + warp * kWarpSmem;

  const int column_units = p.n_tiles / CW;  // per moe block
  const std::int64_t columns = marlin_block_count(p) * column_units;
  const int warps = static_cast<int>(gridDim.x) * 4;
  const int first = static_cast<int>(blockIdx.x) * 4 + warp;
  const std::int64_t whole = columns / warps * warps;  // columns of the full rounds
  const int tail = static_cast<int>(columns - whole);    // < warps
  const int slices = tail > 0 ? min(p.max_slices, warps / tail) : 1;

  // Unit (column, slice of n_slices); tail_column ≥ 0 for a column of the sliced last round.
  auto run = [&](std::int64_t column, int slice, int n_slices, int tail_column) {
    const std::int64_t block = column / column_units;
    const int nt = CW * static_cast<int>(column - block * column_units);
    const int expert = p.expert_ids[block];
    const bool computes = expert >= 0 && expert < p.num_experts;
    if (!computes && slice > 0) return;  // a non-local expert's zeros are stored once, by slice 0
    const std::int64_t row0 = block * p.block_size;
    float acc[4 * CW][1][4];
#pragma unroll
    for (int wg = 0; wg < 4 * CW; ++wg) {
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[wg][0][j] = 0.0f;
    }
    if (computes) {
      const int rounds = (p.k_tiles + kStages - 1) / kStages;  // slices start at multiples of kStages tiles
      const int kt_begin = kStages * (rounds * slice / n_slices);
      const int kt_end = min(p.k_tiles, kStages * (rounds * (slice + 1) / n_slices));
      marlin_warp_k_range<T, BITS, 1, MODE, ROUND_GROUPS, CW>(acc, p, warp_smem, expert, row0, 8, nt, kt_begin, kt_end,
                                                              lane);
      if (n_slices > 1 && !marlin_add_slices<CW>(acc, p, tail_column, tail, slice, n_slices, lane)) return;
    }
#pragma unroll
    for (int c = 0; c < CW; ++c) {
      store_marlin_sums<T, 1, 4>(p, row0, 8, 64 * (nt + c) + (lane >> 2), computes, lane & 3,
                                 [&](int wg, int tt, int j) { return acc[4 * c + wg][tt][j]; });
    }
  };
  // Whole columns dealt round-robin (first = this warp's index in the grid), then the last round:
  // unit u of the tail = slice u / tail of tail column u % tail. One loop, so `run` is inlined once.
  for (std::int64_t unit = first; unit < whole + tail * slices; unit += warps) {
    std::int64_t column = unit;
    int slice = 0, n_slices = 1, c = -1;
    if (unit >= whole) {
      const int u = static_cast<int>(unit - whole);
      slice = u / tail;
      c = u - slice * tail;
      column = whole + c;
      n_slices = slices;
    }
    run(column, slice, n_slices, c);
  }
}

template <typename T, int BITS, QuantMode MODE, int CW>
void launch_marlin_slices(const MarlinParams& params, cudaStream_t stream) {
  constexpr std::size_t smem = marlin_smem_bytes<BITS, 1, CW>();
  const unsigned grid = static_cast<unsigned>(params.slice_grid);
  if (grid == 0) return;
  auto launch = [&](auto kernel) {
    opt_in_shared_memory(kernel, smem, "marlin_moe");
    kernel<<<grid, kMarlinThreads, smem, stream>>>(params);
    check_cuda(cudaGetLastError(), "marlin_moe: kernel launch");
  };
  if constexpr (MODE != QuantMode::k_shard) {
    if (marlin_round_groups(params, MarlinTile<BITS, 1, CW>::kStages)) {
      return launch(marlin_moe_slice_kernel<T, BITS, MODE, true, CW>);
    }
  }
  launch(marlin_moe_slice_kernel<T, BITS, MODE, false, CW>);
}

}  // namespace moeval::kernels::detail
