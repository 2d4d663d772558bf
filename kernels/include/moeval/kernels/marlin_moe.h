// marlin_moe: one MoE GEMM on Marlin-tiled weights, all experts in one launch.
//
//   C[sorted_id, n] = round16( w · Σ_k A'[sorted_id, k] · W16[e, k, n] )
// for every valid sorted_id (< num_slots) of every block b < num_tokens_post_padded / B with
// e = expert_ids[b] ≥ 0, where w = topk_weights[sorted_id] when mul_topk_weights, else 1, and
// A'[sorted_id, k] = A[sorted_id / top_k, k] — or, with act-order, A[sorted_id / top_k, perm[e, k]]
// (the weights' Marlin row k holds checkpoint row perm[e, k]).
//
// Weights (device, per expert e contiguous; pf = 8 for 4-bit, 4 for 8-bit):
//   qweight int32 [E, K/16, N·16/pf]  Marlin tiles: 16×64 tiles laid along N inside each 16-row band
//                                      of K; in a 4-bit tile (128 words), lane l's 4 words hold rows
//                                      (2t, 2t+1, 2t+8, 2t+9) × columns (c, c+8) of each 16-column
//                                      group, t = l % 4, c = l / 4 (8-bit: 256 words, 8 per lane).
//   scales  16-bit [E, G, N]           activation dtype, column-permuted: the grouped permutation
//                                      when G > 1 (and always with act-order), the channelwise one
//                                      when G == 1. The kernel derives which from G, exactly as the
//                                      packer must (a packer that decides from another size is the
//                                      wrong-size_k bug class, and the checks catch it).
//   zeros   int32 [E, G, N/pf]         zero-point types only: grouped permutation, interleave, packed.
//   g_idx   int32 [E, K]               act-order only: group of each Marlin row (non-decreasing).
//   perm    int32 [E, K]               act-order only: checkpoint row of each Marlin row.
// G = num_groups: K / group_size, 1 when channelwise; with a K shard (is_k_full = false) the GLOBAL
// group count of the layer, since a rank keeps every group's scales and finds its rows' groups
// through g_idx.
//
// Dequantization recipe (as wna16_moe, DequantRecipe::sub_then_mul): W16 = round16((u − z)·s) with
// one rounding; z = 8 (uint4b8), 128 (uint8b128) or the stored zero point. fp32 accumulation on
// tensor cores; the routing weight multiplies the fp32 sum, then ONE rounding to 16 bits.
// Rows of blocks whose expert is −1 (or ≥ E, a caller bug never dereferenced) are written as zeros;
// padding ids (≥ num_slots) are never loaded or stored. Deterministic: a K split is reduced in a
// fixed order (inside a thread block in shared memory; across warps, block_size 8, through the
// workspace in slice order, whichever warp arrives last), so repeated calls are bitwise equal.
//
// Act-order: activations are first gathered through perm into the workspace (one row per routed
// slot, [num_slots, K] 16-bit), then the GEMM reads them with top_k = 1. With is_k_full the groups
// are contiguous runs of group_size Marlin rows (plain grouped quantization on the permuted K);
// without it every row's group is read from g_idx (a K shard of a row-parallel layer).
//
// Supported (std::invalid_argument otherwise, naming the argument and the allowed values):
//   type uint4b8, uint4 (zero points), uint8b128, uint8 (zero points); group_size 32, 64, 128 or −1;
//   K % 16 == 0, N % 64 == 0, K % group_size == 0 unless act-order without is_k_full; act-order only
//   for uint4b8/uint8b128 with a group size; block_size ∈ {8, 16, 32, 48, 64, 128};
//   16-byte aligned qweight and scales; A 16-byte aligned for block_size ≥ 16 without act-order (those
//   items copy activation rows in 16-byte pieces), else 4-byte; C 2-byte; for block_size ≥ 16 an A of
//   at most 2^35 − 16 elements (rows addressed by 32-bit offsets); every pointer on one device (the
//   launch goes to that device and the caller's current device is restored); workspace ≥
//   marlin_moe_workspace_bytes(args).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "moeval/kernels/act_dtype.h"
#include "moeval/kernels/moe_gemm_types.h"

namespace moeval::kernels {

enum class MarlinWeightType : std::uint8_t { uint4b8, uint4, uint8b128, uint8 };

constexpr int marlin_bits(MarlinWeightType t) {
  return t == MarlinWeightType::uint4b8 || t == MarlinWeightType::uint4 ? 4 : 8;
}
constexpr bool marlin_has_zero_points(MarlinWeightType t) {
  return t == MarlinWeightType::uint4 || t == MarlinWeightType::uint8;
}
// The scheme names of docs/formats.md: "uint4b8", "uint4", "uint8b128", "uint8".
constexpr const char* to_string(MarlinWeightType t) {
  switch (t) {
    case MarlinWeightType::uint4b8: return "uint4b8";
    case MarlinWeightType::uint4: return "uint4";
    case MarlinWeightType::uint8b128: return "uint8b128";
    case MarlinWeightType::uint8: return "uint8";
  }
  return "unknown";
}

// Which tensor-core instructions run the GEMM. automatic: wgmma (Hopper's asynchronous warpgroup
// MMA) for block_size 32, 64 and 128 without a K shard on a compute capability 9.0 device
// when the library was built with sm_90 among its architectures, mma.sync otherwise (block_size 16
// too: there both measured alike). mma_sync forces the portable path everywhere; wgmma requires it
// (block_size 16 to 128 without a K shard; std::invalid_argument where it cannot run). Both paths
// compute the same recipe and are tested against the same references.
enum class MarlinMmaPath : std::uint8_t { automatic, mma_sync, wgmma };

// The quantized expert weights of one GEMM (w13 or w2) in Marlin layout.
struct MarlinMoeWeights {
  const std::uint32_t* qweight = nullptr;  // [E, K/16, N·16/pf]
  const void* scales = nullptr;            // [E, G, N], activation dtype, permuted
  const std::uint32_t* zeros = nullptr;    // [E, G, N/pf], zero-point types only
  const std::int32_t* g_idx = nullptr;     // [E, K], act-order only
  const std::int32_t* perm = nullptr;      // [E, K], act-order only
  int num_experts = 0;                     // E (local experts on this device)
  MarlinWeightType type = MarlinWeightType::uint4b8;
  int group_size = 128;                    // 32, 64, 128 or -1 (channelwise)
  int num_groups = 0;                      // G (rows of scales per expert); see above
  bool act_order = false;
  bool is_k_full = true;                   // act-order only: false = K shard, groups from g_idx
};

// Which kernel a marlin_moe call launched (MarlinLaunchRecord::form); names as `moeval bench`
// prints them (marlin_kernel_form_name).
enum class MarlinKernelForm : std::uint8_t {
  none,            // nothing launched: no routed slots, or an empty block table
  columns,         // 8-row items, the column kernel (K split over warps_k warps of a block)
  slices,          // 8-row items, the per-warp kernel with K slices in the last round
  thread_block,    // 16- and 32-row items on mma.sync (and every K-shard item height above 8)
  wgmma,           // the wgmma path, one warpgroup a thread block
  wgmma_2wg,       // the wgmma path, two warpgroups sharing each activation chunk
  wgmma_producer,  // the wgmma path's producer form (a copy warpgroup and two consumers)
};
const char* marlin_kernel_form_name(MarlinKernelForm form);

// What one marlin_moe call launched, filled where MarlinMoeArgs::launched points, from the very
// values the launch takes, right before it: a test or benchmark that must know which kernel ran
// reads it here instead of predicting it with the query functions below (which a test of a forced
// choice would only hear echo back).
struct MarlinLaunchRecord {
  MarlinKernelForm form = MarlinKernelForm::none;
  int block_size = 0;
  int token_tiles = 0;       // mma.sync: 8-row tiles of an item's rows (1 on the 8-row kernels)
  int wgmma_warpgroups = 0;  // the wgmma path: 1, 2 or 3 (producer form); else 0
  int warps_k = 0;           // the thread-block and column kernels: warps splitting K; else 0
  int warp_columns = 0;      // the 8-row kernels: Marlin tile columns per warp; else 0
  int max_slices = 0;        // the slice kernel: K slices of a last-round column at most; else 0
  int slice_grid = 0;        // the slice kernel: thread blocks launched; else 0
  std::int64_t split_slots = 0;  // 32-row wgmma items: workspace slots for last-round K pieces
  bool act_order_gather = false;  // the activations were gathered by perm first (one more launch)
};

struct MarlinMoeArgs {
  const void* a = nullptr;  // [T / top_k, K] activation dtype, row-major
  void* c = nullptr;        // [T, N] activation dtype, row = sorted_id
  MarlinMoeWeights weights;
  MoeBlocks blocks;
  GemmNK shape;
  int top_k = 1;  // A row = sorted_id / top_k (GEMM1: topk, GEMM2: 1)
  ActDType dtype = ActDType::bf16;
  const float* topk_weights = nullptr;  // [T] flat [M, topk]; required when mul_topk_weights
  bool mul_topk_weights = false;
  void* workspace = nullptr;  // marlin_moe_workspace_bytes(args) bytes, 16-byte aligned, on the device
  std::size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
  MarlinMmaPath mma_path = MarlinMmaPath::automatic;
  // > 0: at most this many thread blocks in the launch (leaves SMs to concurrent kernels, such as
  // communication; the work is the same, in more rounds). 0: as many as fit on the device.
  int max_thread_blocks = 0;
  // Warpgroups per thread block on the wgmma path with 64-row items (block_size 64): 0 chooses
  // (marlin_moe_wgmma_warpgroups), 1 forces one (two thread blocks per SM), 2 forces two (one thread
  // block per SM whose warpgroups share each activation chunk, items of 512 columns), 3 forces the
  // producer form (one thread block per SM: a warpgroup that only copies, two that multiply the same
  // items as with 2; zeros must be 16-byte aligned). Tests force each; 2 and 3 are rejected
  // (std::invalid_argument) where the call does not run such items.
  int wgmma_warpgroups = 0;
  // Marlin tile columns per warp of the 8-row items (block_size 8 on mma.sync: the slice kernel,
  // marlin_moe_uses_slices, or the column kernel, marlin_moe_column_plan): 0 chooses, 1 or 2
  // forces. Two: each K tile's activation words are copied, waited for and read once for two
  // columns, at 12 warps an SM instead of 20; it needs N a multiple of 128 and no K shard. 2 is
  // rejected (std::invalid_argument) where the call does not run 8-row items; 1 is what every other
  // kernel runs anyway.
  int warp_columns = 0;
  // Warps per thread block of the 8-row column kernel (marlin_moe_column_plan), all on one column
  // unit, splitting K in whole rounds: 0 chooses, 1..kMarlinColumnMaxWarps (20) with one tile column
  // per warp, 1..kMarlinColumnPairMaxWarps (12) with two forces. Rejected (std::invalid_argument)
  // where the call does not run the column kernel.
  int warps_k = 0;
  // block_size 32 on the wgmma path: the items of the last round (round-robin over the thread
  // blocks) each run as up to 4 items of a K range, whose fp32 sums meet in the workspace
  // (marlin_moe_split_slots) and are added in a fixed order; false keeps every item whole (A/Bs,
  // and a caller that wants no split slots). Ignored by every other call.
  bool split_last_round = true;
  // Optional: where to record what the call launched (MarlinLaunchRecord); written on the host
  // before the launch, also where nothing is launched (form none).
  MarlinLaunchRecord* launched = nullptr;
};

// The column kernel's largest thread blocks, in warps (MarlinMoeArgs::warps_k): with one tile column
// per warp, and with two (whose larger rings leave room for fewer warps an SM).
constexpr int kMarlinColumnMaxWarps = 20;
constexpr int kMarlinColumnPairMaxWarps = 12;

// Workspace of block_size 8 (the decode path, 8-row work items): K slices of a tile column run on
// different warps, and each slice's fp32 sums pass through a slot of 2 KiB (8 rows × 64 columns) with
// a 64-bit arrival word, for up to 4096 warps: 8 MiB + 32 KiB. It needs no clearing before a call:
// each call tells its own arrivals by a stamp and leaves the words zero. A stamp never matches
// small integers (such as a freed index array) or a buffer filled with one byte value; leftover
// arbitrary bytes match a word with probability 2^-32.
constexpr std::size_t kMarlinSliceWorkspaceBytes = std::size_t{4096} * (2048 + 8);

// Workspace of block_size 64 and 128: a counter from which the thread blocks of the Hopper path take
// their work items (zeroed on the stream before each launch).
constexpr std::size_t kMarlinItemCounterBytes = 256;

// Workspace of block_size 32 with split_last_round: arrival words (kMarlinLastRoundArrivalBytes;
// stamped as the block_size 8 words above, so they need no clearing), then
// marlin_moe_split_slots(args) slots of kMarlinLastRoundSlotBytes, one K piece's fp32 sums each
// (32 rows × 256 columns).
constexpr std::size_t kMarlinLastRoundArrivalBytes = 4096;
constexpr std::size_t kMarlinLastRoundSlotBytes = 32 * 256 * 4;
constexpr std::int64_t kMarlinLastRoundSlots = 512;
// min(kMarlinLastRoundSlots, 4 · num_slots · ⌈N / 256⌉) for block_size 32 with split_last_round (4
// pieces of every item at most), else 0. Fewer slots only split fewer items, never fail.
std::int64_t marlin_moe_split_slots(const MarlinMoeArgs& args);

// Workspace bytes: act-order needs the gathered activations, num_slots · K · 2 bytes rounded up to
// 256; block_size 8 needs kMarlinSliceWorkspaceBytes after them, block_size 64 and 128
// kMarlinItemCounterBytes, block_size 32 kMarlinLastRoundArrivalBytes + marlin_moe_split_slots(args)
// · kMarlinLastRoundSlotBytes (also where the call runs on mma.sync, which leaves them unused; 0
// slots without split_last_round); otherwise 0 (a K split inside a thread block is reduced in
// shared memory). One workspace serves one call at a time.
std::size_t marlin_moe_workspace_bytes(const MarlinMoeArgs& args);

// Throws std::invalid_argument for unsupported input, std::runtime_error for CUDA failures.
void marlin_moe(const MarlinMoeArgs& args);

// Whether marlin_moe(args) runs on the wgmma path on `device` (after the arguments were checked).
bool marlin_moe_uses_wgmma(const MarlinMoeArgs& args, int device);

// Warpgroups per thread block marlin_moe(args) runs on `device`: 0 off the wgmma path, else 1 or 2
// (two where K ≥ 4096 and the items fill at least 20 rounds of the SMs: marlin_moe.cu says why).
int marlin_moe_wgmma_warpgroups(const MarlinMoeArgs& args, int device);

// Whether marlin_moe(args) runs its 8-row items (block_size 8) on the per-warp kernel with K slices
// on `device`: where the expected tile columns fill a round of the device's resident warps (under
// max_thread_blocks), else the column kernel (marlin_moe_column_plan).
bool marlin_moe_uses_slices(const MarlinMoeArgs& args, int device);

// The 8-row column kernel's plan for marlin_moe(args) on `device`: Marlin tile columns per warp
// (1 or 2) and warps per thread block (warps_k); {0, 0} where the call runs another kernel.
struct MarlinColumnPlan {
  int warp_columns = 0;
  int warps_k = 0;
};
MarlinColumnPlan marlin_moe_column_plan(const MarlinMoeArgs& args, int device);

}  // namespace moeval::kernels
