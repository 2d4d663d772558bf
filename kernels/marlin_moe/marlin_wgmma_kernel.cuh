// Internal: the Marlin MoE GEMM's Hopper path for moe blocks of 16 to 128 rows: asynchronous
// warpgroup MMAs (wgmma, sm_90a) with the dequantized weights as the register operand.
//
// Why Marlin tiles feed wgmma unchanged: wgmma.m64nNk16 with A in registers takes, in each warp of
// the warpgroup, 16 rows of A in exactly the fragment layout of mma.m16n8k16 — the layout a lane of
// a Marlin tile dequantizes its words into (marlin_kernel.cuh). A's 64 rows are output columns n
// (16 per warp: one 16-column group of a Marlin tile), B is the item's ROWS token rows × 16 k, read
// by the tensor cores straight from shared memory, and the accumulators come back in the mma.sync
// C layout, so the epilogue is the mma.sync path's.
//
// Work item = (moe block, N item); the thread block is one warpgroup (WGS = 1) or two (WGS = 2,
// 64-row items only), and each warp owns kGroups 16-column groups of one Marlin tile column per K
// tile and issues one m64nROWSk16 per group:
//   ROWS = 16, 32 (block_size 16, 32): as 64 rows with WGS = 1, m64n16k16 / m64n32k16; the
//                                smaller accumulators let 4 / 3 thread blocks share an SM.
//   ROWS = 64  (block_size 64):  warp w: tile column 4·WGS·n_item + w, all 4 groups; 4 MMAs per K
//                                tile. With WGS = 2 the second warpgroup takes the next 4 columns
//                                and both read the same activation chunks: one block per SM copies
//                                each chunk once for 8 columns instead of twice (two blocks of 4).
//   ROWS = 128 (block_size 128): warp w: tile column 2·n_item + w / 2, groups 2·(w % 2) + {0, 1};
//                                2 MMAs of twice the N per K tile: each dequantized weight feeds 128
//                                tokens instead of 64, which halves the dequantization per MMA.
// 64 and 128 rows keep 128 fp32 accumulators per thread (kGroups × ROWS / 2). The host picks the form
// (choose_wgmma_warpgroups in marlin_moe.cu): the producer form of marlin_wgmma_producer_kernel.cuh,
// which shares this file's per-tile code, wherever it can run, else WGS = 2 for long K and many
// rounds of items and WGS = 1 otherwise.
//
// Why it beats the mma.sync path on these items: the MMAs run asynchronously, so a warp
// dequantizes the next group while the tensor cores work on the previous ones (one A fragment per
// group, overwritten only after that group's MMA of the previous K tile completed), and the
// activations are copied once per thread block instead of once per warp. On the mma.sync path the
// 64-row items kept the tensor pipe 42–44 % busy with `wait` (dequantize → mma) as the largest stall;
// on the H200 this path runs the bench's M = 4096 cells 1.46–1.59× and Mixtral M = 256 1.57× faster
// (docs/bench.md). Tried and dropped (same-run A/B): two A register sets per group (8 MMAs in flight,
// 1.2× slower), 64-row items over 2 tile columns at 3 blocks per SM (1.2–1.3× slower), reading the
// next K tile's words one tile early (no gain), and the weights as a shared-memory operand (each
// warp dequantizes a chunk of 4 K tiles into a B buffer with stmatrix, then m64n256k16 with both
// operands in shared memory, overlapping the next chunk's dequantization: 1.3–1.35× slower — per
// K tile a warpgroup then writes 8 KB and the MMAs read 10 KB of shared memory, ~140 bytes per
// cycle per SM at two warpgroups, above the 128 it delivers).
//
// Synchronisation: the warps of a thread block move through K together (wgmma is warpgroup-wide,
// and the chunks are shared). Each thread copies its own weights into its own ring slots (as on the
// mma.sync path) and 1/(128·WGS) of each activation chunk (ROWS rows × 64 k, 128-byte rows
// XOR-swizzled — exactly wgmma's 128-byte swizzle, so the B descriptor reads the buffer as it is).
// A chunk is published with cp.async.wait, a proxy fence (cp.async writes are generic-proxy, wgmma
// reads async-proxy) and one barrier per 4 K tiles.
//
// Items back to back: once every warp's MMAs of an item are done (wgmma wait, then a barrier), the
// block issues the next item's first kStages tiles and only then stores this item's sums, so the
// copies' latency runs behind the stores. Same-run A/B on the H200: 1–4.6 % faster with two
// warpgroups per block (one block per SM: nothing else hides an item's fill), within ±3 % with one.
// The stores take each row's routed slot from shared memory, where the item's begin put it (the
// threads that copy piece 0 of the rows have it in hand), instead of loading sorted_token_ids again
// from global memory: one dependent global load fewer before every store. Same-run A/B on the H200:
// 2–7 % faster on the bench's M = 4096 cells, 1 % on Mixtral M = 256. Where the epilogue multiplies
// (GEMM2), the same threads also copy each row's routing weight into shared memory during the K
// loop, which removes the stores' last dependent global load.
#pragma once

#include "../common/wgmma.cuh"
#include "marlin_kernel.cuh"

namespace moeval::kernels::detail {

template <int BITS, int ROWS, int WGS = 1>
struct WgmmaTile {
  static_assert(is_wgmma_item_height(ROWS));
  static_assert(WGS == 1 || (WGS == 2 && ROWS == 64), "two warpgroups run 64-row items only");
  static constexpr int kRows = ROWS;                     // tokens per item: the N of m64nNk16
  static constexpr int kThreads = 128 * WGS;             // WGS warpgroups sharing the activation chunks
  static constexpr int kGroups = ROWS == 128 ? 2 : 4;    // 16-column groups per warp and K tile
  // Thread blocks per SM (launch bounds): the accumulators (kGroups × ROWS / 2 per thread) set the
  // registers, so 16-row items run 4 blocks (32 accumulators), 32-row items 3 (64), the rest 2 / WGS
  // (128). 8-bit items one block fewer at 16 and 32 rows: at 128 and 168 registers their zero-point
  // instances spilled 248 and 176 bytes (ptxas, sm_90a).
  static constexpr int kBlocksPerSm = ROWS == 16 ? (BITS == 4 ? 4 : 3) : ROWS == 32 ? (BITS == 4 ? 3 : 2) : 2 / WGS;
  static constexpr int kTileColumns = kGroups * WGS;     // Marlin tile columns per item
  static constexpr int kStages = 8;                      // K tiles in flight (only 8 warps per SM here)
  static constexpr int kChunkTiles = 4;                  // one 128-byte line of k per row
  static constexpr int kWordsPerGroup = BITS / 4;        // int32 words of one group per lane and K tile
  static constexpr int kLaneBytes = 4 * kGroups * kWordsPerGroup;  // 8, 16 or 32
  static constexpr int kUnit = kLaneBytes < 16 ? kLaneBytes : 16;  // bytes per cp.async
  static constexpr int kUnits = kLaneBytes / kUnit;
  static constexpr int kScaleSlots = kStages / 2;        // a group starts only on even tiles of a round
  static constexpr int kChunkBytes = kRows * 128;
  static constexpr int kPiecesPerThread = kRows * 8 / kThreads;  // 16-byte pieces of a chunk per thread
  static constexpr int kPieceRowStride = kThreads / 8;           // rows between a thread's pieces
  // Chunk buffer b is refilled when tile kt + kStages is loaded (kt ≡ 0 mod 4), right after tile
  // kt's MMAs were issued; every warp has by then waited for the MMAs of tiles ≤ kt − 2 (the
  // barrier of chunk kt / 4 follows each warp's wait that leaves only tile kt − 1's MMAs running),
  // so the chunk it held, whose last tile is kt + kStages − 4·B + 3, must be ≤ kt − 2:
  // 4·B ≥ kStages + 5.
  static constexpr int kActBuffers = (kStages + 5 + 3) / 4;
  static constexpr int kRingBytes = kStages * 32 * kLaneBytes + kScaleSlots * 32 * 16;  // per warp
  // The routed slots of an item's rows and, where the epilogue multiplies, their routing weights,
  // for its stores: two buffers of each, since the next item begins (and writes them) before this
  // one stores.
  static constexpr int kSlotBytes = 2 * kRows * (4 + 4);
  static_assert(kStages % kChunkTiles == 0 && kStages % 2 == 0);
};

// Chunk buffers first (1024-byte aligned, as the 128-byte swizzle needs), then one ring per warp,
// then the items' slot ids and routing weights.
template <int BITS, int ROWS, int WGS = 1>
constexpr std::size_t marlin_wgmma_smem_bytes() {
  using Tile = WgmmaTile<BITS, ROWS, WGS>;
  return std::size_t{Tile::kActBuffers} * Tile::kChunkBytes + std::size_t{4 * WGS} * Tile::kRingBytes + Tile::kSlotBytes;
}

// The lane's 4 scales of groups 2h, 2h + 1 (ROWS = 128) or its 8 of all groups, from the 16 bytes of
// a group's grouped-order scales (uint4_at(s, wg) = columns c, c + 8 of group wg).
template <typename T, int KGROUPS>
__device__ inline void set_warp_scales(GroupParams& gp, const uint4& s, int group_first) {
  if constexpr (KGROUPS == 4) {
    set_scales<T>(gp, s);
  } else {
    set_scales<T>(gp, group_first == 0 ? s : make_uint4(s.z, s.w, s.x, s.y));  // groups 2, 3 first
  }
}

// Zero points of the warp's groups (group_first = 0 or 2) in the order the dequantization uses them.
template <typename T, int BITS, int KGROUPS>
__device__ inline void set_warp_zeros(GroupParams& gp, const std::uint32_t (&zw)[BITS / 4], int group_first) {
#pragma unroll
  for (int gg = 0; gg < KGROUPS; ++gg) {
    const int wg = group_first + gg;
    std::uint32_t z_lo, z_hi;
    if constexpr (BITS == 4) {
      z_lo = (zw[0] >> (4 * wg)) & 0xFu;
      z_hi = (zw[0] >> (4 * wg + 16)) & 0xFu;
    } else {
      const std::uint32_t word = (wg >> 1) == 0 ? zw[0] : zw[1];
      z_lo = (word >> (8 * (wg & 1))) & 0xFFu;
      z_hi = (word >> (8 * (wg & 1) + 16)) & 0xFFu;
    }
    gp.zero2[2 * gg] = (Half16<T>::kBase | z_lo) * 0x00010001u;
    gp.zero2[2 * gg + 1] = (Half16<T>::kBase | z_hi) * 0x00010001u;
  }
}

// A warp's group parameters as an item begins: implicit zero points, zero scales (a warp past N
// multiplies zero A fragments) and, where G == 1, the lane's channelwise scales for the whole K.
template <typename T, int KGROUPS>
__device__ inline void set_item_group_params(GroupParams& gp, const MarlinParams& p, int expert, int nt, bool warp_in_n, int g,
                                             int group_first) {
#pragma unroll
  for (int i = 0; i < 8; ++i) gp.zero2[i] = (Half16<T>::kBase | p.implicit_zero) * 0x00010001u;
#pragma unroll
  for (int i = 0; i < 8; ++i) gp.scale2[i] = 0u;
  if (p.channelwise && warp_in_n) set_warp_scales<T, KGROUPS>(gp, channelwise_lane_scales(p, expert, nt, g), group_first);
}

// The A fragment of the warp's group gg of a K tile (one scale per column: a group covers the tile).
template <typename T, int BITS>
__device__ inline void marlin_dequant_group(std::uint32_t (&a)[4], const std::uint32_t* w, const GroupParams& gp, int gg) {
  const std::uint32_t scale_lo[2] = {gp.scale2[2 * gg], gp.scale2[2 * gg]};
  const std::uint32_t scale_hi[2] = {gp.scale2[2 * gg + 1], gp.scale2[2 * gg + 1]};
  marlin_dequant_fragment<T, BITS>(a, w, gg, gp.zero2[2 * gg], gp.zero2[2 * gg + 1], scale_lo, scale_hi);
}

// The lane's words of one K tile from its ring slot (unit i of stage s at 32·kUnit·(s·kUnits + i)).
template <typename Tile>
__device__ inline void load_lane_words(std::uint32_t (&w)[Tile::kLaneBytes / 4], const char* slot) {
#pragma unroll
  for (int i = 0; i < Tile::kUnits; ++i) {
    if constexpr (Tile::kUnit == 16) {
      const uint4 v = *reinterpret_cast<const uint4*>(slot + 32 * 16 * i);
      w[4 * i] = v.x;
      w[4 * i + 1] = v.y;
      w[4 * i + 2] = v.z;
      w[4 * i + 3] = v.w;
    } else {
      const uint2 v = *reinterpret_cast<const uint2*>(slot + 32 * 8 * i);
      w[2 * i] = v.x;
      w[2 * i + 1] = v.y;
    }
  }
}

// The MMAs of one K tile of a warp: per group gg, wait until the MMA that last read frag[gg]
// (issued kGroups MMAs ago) is done, dequantize the group into it, issue its MMA. So a group's
// dequantization overlaps the MMAs before it, across K tiles too, with one A register set.
// `w`: the lane's words of the tile; `b_address`: the shared-memory address of the tile's 16 k in its
// activation chunk. Shared by both wgmma kernels and the measurement of their rate without loads
// (marlin_wgmma_rate.cu). N: the MMAs' token rows, ROWS unless a 64-row item carries its expert's
// tail (N = 80, marlin_wgmma_producer_kernel.cuh).
template <typename T, int BITS, int ROWS, int N = ROWS>
__device__ inline void marlin_wgmma_tile_words(float (&acc)[WgmmaTile<BITS, ROWS>::kGroups][N / 2],
                                               std::uint32_t (&frag)[WgmmaTile<BITS, ROWS>::kGroups][4],
                                               const std::uint32_t (&w)[WgmmaTile<BITS, ROWS>::kLaneBytes / 4],
                                               const GroupParams& gp, unsigned b_address) {
  using Tile = WgmmaTile<BITS, ROWS>;
  const std::uint64_t desc = wgmma_sw128_descriptor(b_address);
#pragma unroll
  for (int gg = 0; gg < Tile::kGroups; ++gg) {
    wgmma_wait<Tile::kGroups - 1>();
    marlin_dequant_group<T, BITS>(frag[gg], w, gp, gg);
    wgmma_fence();
    wgmma_m64k16<T, N>(acc[gg], frag[gg], desc);
    wgmma_commit();
  }
}
// The same with the lane's words read from its ring slot `lane_words`.
template <typename T, int BITS, int ROWS>
__device__ inline void marlin_wgmma_tile(float (&acc)[WgmmaTile<BITS, ROWS>::kGroups][ROWS / 2],
                                         std::uint32_t (&frag)[WgmmaTile<BITS, ROWS>::kGroups][4], const char* lane_words,
                                         const GroupParams& gp, unsigned b_address) {
  using Tile = WgmmaTile<BITS, ROWS>;
  std::uint32_t w[Tile::kLaneBytes / 4];
  load_lane_words<Tile>(w, lane_words);
  marlin_wgmma_tile_words<T, BITS, ROWS>(acc, frag, w, gp, b_address);
}

// The last round of a 32-row call (MarlinParams::split_slots > 0). Items are dealt round-robin, so
// with I items on a grid of G thread blocks the last round holds I mod G of them, and it takes as
// long as a full one: each thread block's K loop, not the memory system, sets an item's time here
// (Mixtral w13 at M = 64: 896 items on 396 blocks, three rounds of ~76 µs for 2.26 rounds of work).
// So each of the last round's items runs as `pieces` items of a K range (whole K rounds), at most
// ⌊G / (I mod G)⌋ of them (the round stays one round), at most kMaxLastRoundPieces and one per
// workspace slot: each piece writes its fp32 sums to its slot and arrives on its item's counter, and
// the piece that arrives last adds every slot in piece order and stores. No piece waits for
// another; the order of the additions is fixed, so a call is bitwise the same on repeat (not
// bitwise the unsplit sum: the K order differs; both are within the fp32 bound the error tier
// checks, and exact-tier sums are exact either way).
constexpr int kMaxLastRoundPieces = 4;
struct LastRound {
  std::int64_t whole;  // items before the split ones (all items where pieces is 1)
  int pieces;
};
// The block's copy of its call's LastRound, in shared memory: registers are what the 4-bit 32-row
// instances (3 thread blocks an SM, 168 registers) have least of. A function's __shared__ variable,
// so that only the instances that split (32 rows) allot it.
__device__ inline LastRound& last_round_shared() {
  __shared__ LastRound round;
  return round;
}
// Virtual item v of a call split so (whole items first, then `pieces` consecutive values per split
// item): the item it computes and which of its pieces. split: the item's index among the split
// ones, −1 for a whole item (piece 0 of 1).
struct VirtualItem {
  std::int64_t item;
  std::int64_t split;
  int piece;
  int pieces;
};
__device__ inline VirtualItem virtual_item(const LastRound& round, std::int64_t v) {
  if (v < round.whole) return {v, -1, 0, 1};
  const std::int64_t j = v - round.whole;
  return {round.whole + j / round.pieces, j / round.pieces, static_cast<int>(j % round.pieces), round.pieces};
}
__device__ inline LastRound last_round(const MarlinParams& p, std::int64_t items, int k_tiles, int round_tiles) {
  const std::int64_t grid = gridDim.x;
  const std::int64_t whole = items / grid * grid;
  const std::int64_t rest = items - whole;
  if (p.split_slots <= 0 || rest == 0) return {items, 1};
  const std::int64_t fit = min(grid / rest, p.split_slots / rest);
  const std::int64_t rounds = (k_tiles + round_tiles - 1) / round_tiles;
  const int pieces = static_cast<int>(min(min(fit, std::int64_t{kMaxLastRoundPieces}), rounds));
  return pieces > 1 ? LastRound{whole, pieces} : LastRound{items, 1};
}

// A split item's piece (last_round): writes the thread's sums to the piece's workspace slot (float4
// e of thread c at e · kThreads + c, coalesced) and arrives on the item's counter; in the piece that
// arrives last, replaces the sums by every slot's, added in piece order, and returns true (it
// stores). Every thread of the block calls it.
template <typename Tile>
__device__ inline bool add_last_round_pieces(float (&acc)[Tile::kGroups][Tile::kRows / 2], const MarlinParams& p, int split,
                                             int piece, int pieces, int tid) {
  constexpr int kPer = Tile::kRows / 8;                 // float4s per group
  constexpr int kSlot = Tile::kGroups * kPer * Tile::kThreads;  // float4s per slot
  static_assert(kSlot * 16 <= kMarlinLastRoundSlotBytes);
  float4* const slots = reinterpret_cast<float4*>(p.split_partials) + static_cast<std::int64_t>(split) * pieces * kSlot + tid;
  float4* const mine = slots + piece * kSlot;
#pragma unroll
  for (int gg = 0; gg < Tile::kGroups; ++gg) {
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const float* a = &acc[gg][4 * e];
      __stcg(mine + (gg * kPer + e) * Tile::kThreads, make_float4(a[0], a[1], a[2], a[3]));
    }
  }
  __threadfence();  // this thread's slot words are visible GPU-wide before the arrival
  __syncthreads();  // every thread's words written and fenced
  const bool last =
      __syncthreads_or(tid == 0 && stamped_arrival(p.split_arrivals + split, p.call_stamp) == unsigned(pieces - 1)) != 0;
  if (!last) return false;
  if (tid == 0) p.split_arrivals[split] = 0;  // every piece arrived: nothing else touches the word this call
  __threadfence();  // every other piece wrote its slot before its arrival; read them after ours
  // Piece 0's sums, then each later piece's added (a rolled loop: unrolled, the loads of several
  // pieces would be in flight beside the sums and the next item's load state, and spill).
#pragma unroll
  for (int gg = 0; gg < Tile::kGroups; ++gg) {
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const float4 v = __ldcg(slots + (gg * kPer + e) * Tile::kThreads);
      float* a = &acc[gg][4 * e];
      a[0] = v.x;
      a[1] = v.y;
      a[2] = v.z;
      a[3] = v.w;
    }
  }
#pragma unroll 1
  for (int q = 1; q < pieces; ++q) {
    const float4* const slot = slots + q * kSlot;
#pragma unroll
    for (int gg = 0; gg < Tile::kGroups; ++gg) {
#pragma unroll
      for (int e = 0; e < kPer; ++e) {
        const float4 v = __ldcg(slot + (gg * kPer + e) * Tile::kThreads);
        float* a = &acc[gg][4 * e];
        a[0] += v.x;
        a[1] += v.y;
        a[2] += v.z;
        a[3] += v.w;
      }
    }
  }
  return true;
}

// 64- and 128-row items: two thread blocks per SM of one warpgroup, or one of two: 128 accumulators
// per thread leave room for no third warpgroup (measured: 64-row items over 2 tile columns, 64
// accumulators and 3 blocks per SM, ran 1.2–1.3× slower on the H200). 16- and 32-row items: 4 and 3
// (WgmmaTile::kBlocksPerSm).
// ROUND_GROUPS: a group is one K round (marlin_round_groups), so groups start at s = 0 only.
template <typename T, int BITS, int ROWS, int WGS, QuantMode MODE, bool ROUND_GROUPS>
__global__ void __launch_bounds__(WgmmaTile<BITS, ROWS, WGS>::kThreads, WgmmaTile<BITS, ROWS, WGS>::kBlocksPerSm)
    marlin_wgmma_kernel(const MarlinParams p) {
  static_assert(MODE != QuantMode::k_shard, "the K-shard path runs 32-row items on mma.sync");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Tile = WgmmaTile<BITS, ROWS, WGS>;
  constexpr int kStages = Tile::kStages;
  constexpr int kRows = Tile::kRows;
  constexpr int kGroups = Tile::kGroups;
  extern __shared__ __align__(1024) uint4 smem[];  // marlin_wgmma_smem_bytes

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int g = lane >> 2;
  const int t = lane & 3;
  const int warp_column = kGroups == 4 ? warp : warp >> 1;         // tile column of the item
  const int group_first = kGroups == 4 ? 0 : 2 * (warp & 1);      // first of the warp's groups
  char* const act_buffers = reinterpret_cast<char*>(smem);
  const unsigned act_shared = shared_address(act_buffers);
  char* const ring = act_buffers + Tile::kActBuffers * Tile::kChunkBytes + warp * Tile::kRingBytes;
  char* const slots = ring + lane * Tile::kUnit;                          // stage s: + 32·kLaneBytes·s
  uint4* const scale_slots = reinterpret_cast<uint4*>(ring + kStages * 32 * Tile::kLaneBytes) + lane;  // pair s / 2
  if ((act_shared & 1023u) != 0) __trap();  // the swizzled B descriptors need 1024-byte aligned chunks
  // item_slots[kRows·b + r]: the routed slot of row r of the item in slot buffer b, −1 for padding;
  // item_weights[kRows·b + r]: its routing weight (copied only where the epilogue multiplies).
  std::int32_t* const item_slots =
      reinterpret_cast<std::int32_t*>(act_buffers + Tile::kActBuffers * Tile::kChunkBytes + 4 * WGS * Tile::kRingBytes);
  float* const item_weights = reinterpret_cast<float*>(item_slots + 2 * kRows);

  const std::int64_t items = marlin_block_count(p) * p.row_groups * p.n_items;
  const int k_tiles = p.k_tiles;
  // 32-row items split their last round in K pieces (last_round); the loop runs over virtual items
  // (virtual_item), read back from shared memory where an item begins and where it ends.
  constexpr bool kSplitLastRound = ROWS == 32;
  std::int64_t virtual_items = items;
  if constexpr (kSplitLastRound) {
    const LastRound split = last_round(p, items, k_tiles, kStages);
    if (tid == 0) last_round_shared() = split;
    virtual_items = split.whole + (items - split.whole) * split.pieces;
  }
  const int q = tid & 7;  // this thread's 16-byte piece of each chunk row (k 8q .. 8q + 7)
  const std::int64_t weight_kt_stride = static_cast<std::int64_t>(p.n_tiles) * MarlinTile<BITS, 1>::kWords;

  // The load state of the item whose tiles are being copied (set by `begin`, advanced by `load`).
  MarlinItem it{};
  int nt = 0;
  bool warp_in_n = false;  // a warp past N still joins every wgmma, with zero A
  const std::uint16_t* a_src[Tile::kPiecesPerThread] = {};
  const std::uint32_t* weight = nullptr;
  const std::uint16_t* scales = nullptr;
  const std::uint32_t* zeros = nullptr;
  std::uint32_t zw[Tile::kScaleSlots][BITS / 4];
  int kt_begin = 0, kt_end = k_tiles;  // the item's K range (a piece of it in a split last round)
  int load_buf = 0, compute_buf = 0;
  int slot_buf = 1;  // the slot buffer of the item being loaded (begin flips it first)
  auto next_buf = [](int b) { return b + 1 == Tile::kActBuffers ? 0 : b + 1; };

  // Loads tile round + s into stage s: the lane's weights (and, where a group starts, its
  // scales and zero words), and with every fourth tile this thread's pieces of the chunk.
  auto load = [&](int s, int round) {
    const int kt = round + s;
    if (warp_in_n) {
#pragma unroll
      for (int i = 0; i < Tile::kUnits; ++i) {
        char* dst = slots + 32 * Tile::kLaneBytes * s + 32 * Tile::kUnit * i;
        if constexpr (Tile::kUnit == 16) {
          copy_async_16(dst, weight + 4 * i);
        } else {
          copy_async_8(dst, weight + 2 * i);
        }
      }
      weight += weight_kt_stride;
      if (starts_group<ROUND_GROUPS>(p, round, s, kt_begin)) {
        if (!p.channelwise) copy_async_16_cached(scale_slots + 32 * (s / 2), scales);
        scales += p.n;
        if constexpr (MODE == QuantMode::zero_point) {
          if constexpr (BITS == 4) {
            zw[s / 2][0] = __ldg(zeros);
          } else {
            const uint2 v = __ldg(reinterpret_cast<const uint2*>(zeros));
            zw[s / 2][0] = v.x;
            zw[s / 2][1] = v.y;
          }
          zeros += p.n * BITS / 32;
        }
      }
    }
    if (s % Tile::kChunkTiles == 0) {
      char* buf = act_buffers + Tile::kChunkBytes * load_buf;
      const bool in_k = kt + (q >> 1) < k_tiles;
#pragma unroll
      for (int i = 0; i < Tile::kPiecesPerThread; ++i) {
        const bool fill = in_k && a_src[i] != nullptr;
        copy_async_16_or_zero(buf + 16 * chunk_unit((tid >> 3) + Tile::kPieceRowStride * i, q),
                              fill ? a_src[i] + 16 * kt : p.a, fill);
      }
      load_buf = next_buf(load_buf);
    }
  };

  // Decodes virtual item `v`, points the load state at it and, where it computes, issues its first
  // kStages tiles. Called only when no MMA of the block reads the chunk buffers any more.
  auto begin = [&](std::int64_t v) {
    std::int64_t item = v;
    kt_begin = 0;
    kt_end = k_tiles;
    if constexpr (kSplitLastRound) {
      const VirtualItem vi = virtual_item(last_round_shared(), v);
      item = vi.item;
      if (vi.split >= 0) {
        kt_begin = marlin_k_split(k_tiles, vi.pieces, vi.piece, kStages);
        kt_end = marlin_k_split(k_tiles, vi.pieces, vi.piece + 1, kStages);
      }
    }
    it = marlin_item<kRows>(p, item);
    nt = it.n_item * Tile::kTileColumns + warp_column;
    warp_in_n = nt < p.n_tiles;
    slot_buf ^= 1;
    // This thread's pieces of each chunk: rows tid / 8 + kPieceRowStride·i, piece q; pointers at
    // that piece, null for padding rows (zero-filled, never read). The threads of piece 0 also keep
    // each row's slot for the stores (also where the item does not compute: its rows store zeros),
    // so that the stores wait on no global load for them.
#pragma unroll
    for (int i = 0; i < Tile::kPiecesPerThread; ++i) {
      const int r = (tid >> 3) + Tile::kPieceRowStride * i;
      const std::int64_t sid = r < it.rows ? p.sorted_token_ids[it.row0 + r] : p.num_slots;
      const bool real = sid >= 0 && sid < p.num_slots;
      a_src[i] = real ? p.a + (sid / p.top_k) * p.k + 8 * q : nullptr;
      if (q == 0) item_slots[kRows * slot_buf + r] = real ? static_cast<std::int32_t>(sid) : -1;
    }
    if (!it.computes) return;
    // From the K range's first tile, and the scales and zero points of its group (kt_begin is a
    // whole K round, so a group starts there in every grouped size; channelwise: group 0).
    const std::int64_t group = p.channelwise ? 0 : kt_begin >> p.group_tile_shift;
    weight = p.qweight + static_cast<std::int64_t>(it.expert) * p.k_tiles * weight_kt_stride + kt_begin * weight_kt_stride +
             static_cast<std::int64_t>(nt) * MarlinTile<BITS, 1>::kWords + lane * MarlinTile<BITS, 1>::kWordsPerLane +
             group_first * Tile::kWordsPerGroup;
    scales = p.scales + (static_cast<std::int64_t>(it.expert) * p.groups + group) * p.n + 64 * nt + 8 * g;
    zeros = p.zeros == nullptr ? nullptr
                               : p.zeros + (static_cast<std::int64_t>(it.expert) * p.groups + group) * (p.n * BITS / 32) +
                                     (64 * nt + 8 * g) * BITS / 32;
#pragma unroll
    for (int i = 0; i < Tile::kScaleSlots; ++i) {
#pragma unroll
      for (int h = 0; h < BITS / 4; ++h) zw[i][h] = 0u;
    }
    load_buf = 0;
    compute_buf = 0;
    pipelined_k_prologue<kStages>(kt_begin, kt_end, load);
    // The routing weights of the rows this thread kept, after the prologue's copies (their address
    // waits for the slot, read back here from shared memory). They join the K loop's first cp.async
    // group; the loop's final wait and the barrier after it make them visible to the stores.
    if (q == 0 && p.topk_weights != nullptr) {
#pragma unroll
      for (int i = 0; i < Tile::kPiecesPerThread; ++i) {
        const int r = (tid >> 3) + Tile::kPieceRowStride * i;
        const std::int32_t sid = item_slots[kRows * slot_buf + r];
        if (sid >= 0) copy_async_4(item_weights + kRows * slot_buf + r, p.topk_weights + sid);
      }
    }
  };

  if constexpr (kSplitLastRound) __syncthreads();  // last_round_shared() written
  std::int64_t item = blockIdx.x;  // a virtual item
  if (item < virtual_items) begin(item);
  while (item < virtual_items) {
    float acc[kGroups][kRows / 2];
#pragma unroll
    for (int gg = 0; gg < kGroups; ++gg) {
#pragma unroll
      for (int i = 0; i < kRows / 2; ++i) acc[gg][i] = 0.0f;
    }
    if (it.computes) {
      GroupParams gp;
      set_item_group_params<T, kGroups>(gp, p, it.expert, nt, warp_in_n, g, group_first);
      std::uint32_t frag[kGroups][4];  // the A fragments (marlin_wgmma_tile)
      auto compute = [&](int s, int round) {
        wait_async<kStages - 1>();
        if (s % Tile::kChunkTiles == 0) {
          fence_proxy_async_shared();
          __syncthreads();  // every thread's pieces of the chunk have landed
        }
        if (warp_in_n && starts_group<ROUND_GROUPS>(p, round, s, kt_begin)) {
          if (!p.channelwise) set_warp_scales<T, kGroups>(gp, scale_slots[32 * (s / 2)], group_first);
          if constexpr (MODE == QuantMode::zero_point) set_warp_zeros<T, BITS, kGroups>(gp, zw[s / 2], group_first);
        }
        marlin_wgmma_tile<T, BITS, ROWS>(acc, frag, slots + 32 * Tile::kLaneBytes * s, gp,
                                         act_shared + static_cast<unsigned>(Tile::kChunkBytes) * compute_buf +
                                             32u * static_cast<unsigned>(s % Tile::kChunkTiles));
        if (s % Tile::kChunkTiles == Tile::kChunkTiles - 1) compute_buf = next_buf(compute_buf);
      };
      pipelined_k_rounds<kStages>(kt_begin, kt_end, load, compute);
      wgmma_wait<0>();
      wait_async<0>();
    }
    // Every warp's MMAs are done: the chunk buffers are free for the next item, whose first tiles
    // are then copied while this item's sums are stored (the copies' latency behind the stores).
    __syncthreads();
    const MarlinItem done = it;
    const int done_nt = nt;
    const bool done_in_n = warp_in_n;
    const std::int32_t* const done_slots = item_slots + kRows * slot_buf;  // written before the K loop's barriers
    const float* const done_weights = item_weights + kRows * slot_buf;
    const std::int64_t done_v = item;
    item += gridDim.x;
    if (item < virtual_items) begin(item);
    if constexpr (kSplitLastRound) {
      const VirtualItem vi = virtual_item(last_round_shared(), done_v);
      if (vi.split >= 0 && (done.computes ? !add_last_round_pieces<Tile>(acc, p, static_cast<int>(vi.split), vi.piece,
                                                                         vi.pieces, tid)
                                          : vi.piece != 0)) {
        continue;  // a piece of a split item that another piece stores (a non-local expert's zeros: piece 0)
      }
    }
    if (done_in_n) {
      store_marlin_sums<T, kRows / 8, kGroups>(p, done.rows, 64 * done_nt + 16 * group_first + g, done.computes, t,
                                               [&](int r) { return std::int64_t{done_slots[r]}; },
                                               // (a non-local expert's rows store zeros: no weights were copied)
                                               [&](int r, std::int64_t) { return done.computes ? done_weights[r] : 0.0f; },
                                               [&](int gg, int tt, int j) { return acc[gg][4 * tt + j]; });
    }
  }
#else
  __trap();  // never launched: the host takes this path only where the sm_90a code was built
#endif
}

template <typename T, int BITS, int ROWS, int WGS, QuantMode MODE>
void launch_marlin_wgmma_mode(const MarlinParams& params, cudaStream_t stream) {
  auto launch = [&](auto kernel) {
    launch_persistent(kernel, WgmmaTile<BITS, ROWS, WGS>::kThreads, params.block_capacity * params.row_groups * params.n_items,
                      params, stream, "marlin_moe", marlin_wgmma_smem_bytes<BITS, ROWS, WGS>(), params.likely_items,
                      params.max_grid);
  };
  if (marlin_round_groups(params, WgmmaTile<BITS, ROWS, WGS>::kStages)) {
    launch(marlin_wgmma_kernel<T, BITS, ROWS, WGS, MODE, true>);
  } else {
    launch(marlin_wgmma_kernel<T, BITS, ROWS, WGS, MODE, false>);
  }
}

template <typename T, int BITS, int ROWS, int WGS>
void launch_marlin_wgmma_wgs(const MarlinParams& params, cudaStream_t stream) {
  if (params.zeros != nullptr) {
    launch_marlin_wgmma_mode<T, BITS, ROWS, WGS, QuantMode::zero_point>(params, stream);
  } else {
    launch_marlin_wgmma_mode<T, BITS, ROWS, WGS, QuantMode::symmetric>(params, stream);
  }
}

}  // namespace moeval::kernels::detail
