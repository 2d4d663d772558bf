// Internal: what the host hands the Marlin MoE GEMM kernel, and the launchers per dtype × bits.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "moeval/kernels/marlin_moe.h"

namespace moeval::kernels::detail {

struct MarlinParams {
  const std::uint16_t* a;        // [rows, K]: A (row = sorted_id / top_k) or the act-order gather
  std::uint16_t* c;              // [T, N]
  const std::uint32_t* qweight;  // [E, K/16, N·16/pf]
  const std::uint16_t* scales;   // [E, G, N], permuted
  const std::uint32_t* zeros;    // [E, G, N/pf], or null (implicit zero)
  const std::int32_t* g_idx;     // [E, K], K-shard path only
  const float* topk_weights;     // [T]; null unless the epilogue multiplies
  const std::int32_t* sorted_token_ids;
  const std::int32_t* expert_ids;
  const std::int32_t* num_tokens_post_padded;
  std::int64_t n;
  std::int64_t k;
  std::int64_t num_slots;        // T
  std::int64_t block_capacity;   // whole blocks inside sorted_capacity
  int k_tiles;                   // K / 16
  int n_tiles;                   // N / 64: Marlin tiles across N
  int groups;                    // G: rows of scales per expert
  int group_tile_shift;          // grouped: group of k-tile kt = kt >> shift (group_size / 16 = 2^shift)
  int group_tile_mask;           // kt & mask == 0: kt starts a group (channelwise: only kt = 0)
  bool channelwise;              // G == 1 without act-order: channelwise scale permutation, group 0
  int num_experts;
  int top_k;
  int block_size;                // B
  int row_groups;                // a block's rows are split into groups of 8·token_tiles rows
  int n_items;                   // ceil(n_tiles / warps_n): work items across N per row group
  int warps_k;                   // warps splitting K inside a thread block (1, 2 or 4; the column kernel: 1..20)
  std::int64_t likely_items;     // the host's estimate of the work items (launch_persistent)
  std::uint32_t implicit_zero;   // 8 or 128 when zeros is null
  // 8-row items (marlin_slice_kernel.cuh): at most max_slices K slices per tile column, grid of
  // slice_grid blocks; per-slice fp32 sums and per-column arrival words in the workspace; call_stamp
  // tells this call's arrivals from anything else in those words.
  int max_slices;
  std::int64_t slice_grid;       // 0: 8-row items run on the thread-block kernel instead
  int warp_columns;              // 8-row kernels' Marlin tile columns per warp: 1 or 2 (n_tiles even)
  std::int64_t max_grid;         // > 0: MarlinMoeArgs::max_thread_blocks
  float* slice_partials;
  unsigned long long* slice_arrivals;
  std::uint32_t call_stamp;
  // The wgmma producer form (marlin_wgmma_producer_kernel.cuh): its thread blocks take their items
  // after the first from this counter in the workspace, zeroed before the launch.
  unsigned long long* item_counter;
  // 32-row wgmma items (marlin_wgmma_kernel.cuh, last_round): the last round's split items' arrival
  // words (stamped with call_stamp, as the slice kernel's) and split_slots workspace slots of fp32
  // sums; 0 slots: no split.
  unsigned long long* split_arrivals;
  float* split_partials;
  std::int64_t split_slots;
};

// The stamp of call number n (0 where n gives none; the host takes the next n). An arrival word of
// the workspace counts for a call only where its upper half equals the call's stamp, so what a
// caller's buffer held before must not: stamps are a bijective 32-bit mix of n (distinct for 2^32
// calls), never below 2^24 (int32 index arrays, such as a freed sorted_token_ids, hold small values
// there) and never four equal bytes (a buffer filled with one byte value); arbitrary bytes match a
// word with probability 2^-32. (A counter 1, 2, 3, … matched small integers left in the buffer.)
constexpr std::uint32_t call_stamp(std::uint32_t n) {
  std::uint32_t h = n + 0x9E3779B9u;  // murmur3's finalizer: a bijection of the 32-bit values
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  const std::uint32_t b = h & 0xFFu;
  return h < (1u << 24) || h == b * 0x01010101u ? 0u : h;
}

// The 32-row split's arrival words (marlin_moe.h: kMarlinLastRoundArrivalBytes / 8 of them) cover
// its items: at most kMarlinLastRoundSlots / 2 are split (2 pieces each at least).
static_assert(kMarlinLastRoundArrivalBytes / 8 >= kMarlinLastRoundSlots / 2);

// Workspace bytes of the item counter, for block_size 64 and 128 (the sizes the producer form runs).
constexpr std::size_t kItemCounterBytes = 256;
static_assert(kItemCounterBytes == kMarlinItemCounterBytes);

// K tiles in flight per warp (MarlinTile::kStages): 8 for 8- and 16-row 4-bit items, else 4. K
// ranges split across warps start at multiples of it.
constexpr int marlin_k_stages(int bits, int token_tiles) { return bits == 4 && token_tiles <= 2 ? 8 : 4; }

// Thread blocks of one kernel instance that fit an SM (its launch bounds; the host's work split
// plans with it): 8-row items 5 (≤ 102 registers, 36 KB of shared memory each), 16-row items 4
// (at 5 the symmetric instance spilled, and 4 measured 1–2 % faster), 32-row items 3 (64
// accumulators), 64-row items 2 (128 accumulators).
constexpr int marlin_resident_blocks(int token_tiles) {
  return token_tiles >= 8 ? 2 : token_tiles == 4 ? 3 : token_tiles == 2 ? 4 : 5;
}
// Thread blocks of the 8-row slice kernel per SM with `columns` Marlin tile columns per warp: 5 with
// one (as above), 3 with two (twice the weight slots: 64 KB of shared memory a block at 4 bits, and
// 145–168 registers a thread, within the 170 that 3 blocks leave).
constexpr int marlin_slice_resident_blocks(int columns) { return columns == 2 ? 3 : marlin_resident_blocks(1); }

// Host heuristics of marlin_moe (declared here for their host tests).
// Rows per work item / 8: a whole block up to 32 rows; 48 → 3 × 16 rows; 64 and 128 → 64-row
// groups (32-row groups on the K-shard path, which has no 64-row instance).
int marlin_token_tiles(int block_size, bool k_shard);
// Blocks moe_align will likely produce for these arguments (uniform routing), ≤ block_capacity.
std::int64_t likely_blocks(const MarlinMoeArgs& args, std::int64_t block_capacity);
// The mean block count of moe_align under uniform routing (the persistent grid is sized by it).
double expected_blocks(const MarlinMoeArgs& args);
// Warps splitting K (1, 2 or 4) for `resident` thread blocks on the device; see marlin_moe.cu.
int choose_warps_k(const MarlinMoeArgs& args, std::int64_t block_capacity, int row_groups, std::int64_t resident);
// Warpgroups per thread block of a wgmma call on `sms` SMs: args.wgmma_warpgroups where forced, else
// the producer form (kWgmmaProducerForm) where the zero points are 16-byte aligned (or absent), else
// two for block_size 64 with K ≥ 4096 and at least 20 rounds of 8-column items, else one.
int choose_wgmma_warpgroups(const MarlinMoeArgs& args, std::int64_t block_capacity, int sms);

// Workspace of the 8-row kernel's K slices (after the act-order activations): a slot of 8 rows × 64
// columns of fp32 sums and a 64-bit arrival word per warp, for grids of up to kMaxSliceWarps warps.
constexpr int kMaxSliceWarps = 4096;
constexpr std::size_t kSliceSlotBytes = 8 * 64 * sizeof(float);
constexpr std::size_t kSliceWorkspaceBytes = kMaxSliceWarps * (kSliceSlotBytes + sizeof(unsigned long long));
static_assert(kSliceWorkspaceBytes == kMarlinSliceWorkspaceBytes);

// 8-row items: K slices of at least this many rounds of marlin_k_stages tiles (shorter slices
// spend more on their fixed costs, the slot write and the reduction, than they save).
constexpr int kMinSliceRounds = 2;
// K slices at most per tile column and the grid (thread blocks) of the 8-row slice kernel for `sms`
// SMs; grid 0 where the thread-block kernel takes the call (see marlin_moe.cu).
struct SlicePlan {
  int max_slices;
  std::int64_t grid;
  int columns = 1;  // Marlin tile columns per warp
};
SlicePlan plan_slices(const MarlinMoeArgs& args, std::int64_t likely_columns, int sms);

// Warps an SM holds on the 8-row column kernel (its launch bounds) with `columns` Marlin tile columns
// per warp: 20 with one (≤ 102 registers, 10 KB of ring a warp at 4 bits), 12 with two (≤ 170
// registers, 16 KB a warp).
constexpr int marlin_column_max_warps(int columns) {
  return columns == 2 ? kMarlinColumnPairMaxWarps : kMarlinColumnMaxWarps;
}
// The column kernel's plan (marlin_column_kernel.cuh) for an 8-row call off the slice kernel, with
// `blocks` expected moe blocks on `sms` SMs: tile columns per warp and warps per thread block.
struct ColumnPlan {
  int columns;
  int warps_k;
};
ColumnPlan plan_columns(const MarlinMoeArgs& args, std::int64_t blocks, int sms);

// Launches one persistent grid; token_tiles = rows per item / 8 (1, 2, 4 or 8); k_shard selects the
// per-row group lookup through g_idx (act-order without is_k_full).
template <typename T, int BITS>
void launch_marlin(const MarlinParams& params, int token_tiles, bool k_shard, cudaStream_t stream);

// The wgmma path (sm_90a) for items of `rows` = 16, 32, 64 or 128 tokens (the block size) on
// `warpgroups` warpgroups per thread block (2 only with 64 rows, the producer form's 3 with 64 or
// 128): warps_k = 1, row_groups = 1, n_items = ⌈n_tiles / wgmma_tile_columns(rows, warpgroups)⌉;
// symmetric or zero-point mode from params.zeros.
// Defined only in builds with MOEVAL_HAVE_WGMMA (kernels/CMakeLists.txt).
template <typename T, int BITS>
void launch_marlin_wgmma(const MarlinParams& params, int rows, int warpgroups, cudaStream_t stream);
// The item heights the wgmma kernels have (WgmmaTile): a whole block of 16, 32, 64 or 128 rows.
constexpr bool is_wgmma_item_height(int rows) { return rows == 16 || rows == 32 || rows == 64 || rows == 128; }
// wgmma_warpgroups of the producer form (64-row items): a producer warpgroup and two consumers.
constexpr int kWgmmaProducerForm = 3;
// Marlin tile columns of one wgmma item: per warpgroup that multiplies 4 for 16 to 64 rows (a warp
// per column, all 4 groups), 2 for 128 rows (two warps per column, 2 groups each: the same 128
// accumulators per thread); the producer form's two consumers take 8.
constexpr int wgmma_tile_columns(int rows, int warpgroups) {
  return (rows == 128 ? 2 : 4) * (warpgroups == kWgmmaProducerForm ? 2 : warpgroups);
}

}  // namespace moeval::kernels::detail
