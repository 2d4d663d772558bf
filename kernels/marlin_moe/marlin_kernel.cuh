// Internal: the Marlin MoE GEMM kernel.
//
// Why the weights are the 16-row mma operand: in a Marlin tile, lane l's word for 16-column group
// wg holds rows (2t, 2t+1, 2t+8, 2t+9) × columns (c, c+8) of that group (t = l % 4, c = l / 4) —
// exactly the A fragment of mma.m16n8k16 when A's 16 rows are 16 output columns n and its 16
// columns are k. So a lane dequantizes its own 16 bytes straight into A fragments, and the tokens
// of a moe block are the 8-column B operand: an 8-row decode block wastes no half of the MMA.
//
// Work item = (moe block, row group of 8·TT rows, N item). A thread block of 4 warps owns one item
// at a time (persistent grid, items dealt round-robin, N fastest). Warps are warps_n × warps_k: a
// warp owns one 64-column Marlin tile column over its share of the 16-row K tiles; partial sums of
// a K split are added in shared memory in warp order (deterministic, no atomics).
//
// Data movement per K tile: each lane copies its 16 (4-bit) or 32 (8-bit) bytes of the tile — one
// contiguous 512/1024-byte piece per warp — into its own shared-memory slots with cp.async, kStages
// tiles ahead; where a group starts, also its 16 bytes of permuted scales (the scales of columns c,
// c+8, ..., c+56 of the tile) into a scale slot; zero points travel in registers. Activations travel in chunks of four K tiles: the
// warp copies its 8·TT rows × 64 k (128 bytes a row, 16 bytes a lane) into an XOR-swizzled buffer
// and reads B fragments back with ldmatrix. A warp synchronizes only with itself (__syncwarp after
// each wait), never with the other warps of its block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../common/async_copy.cuh"
#include "../common/dequant16.cuh"
#include "../common/persistent_launch.cuh"
#include "moeval/kernels/device_info.h"
#include "marlin_params.h"

namespace moeval::kernels::detail {

constexpr int kMarlinThreads = 128;

// What one warp keeps in flight: per K tile (uint4 slots of 32 lanes) the lane's weights and its 8
// scales (read only where a group starts), and the item's activations, in one of two ways:
// - chunked (16- and 32-row items): per chunk of kChunkTiles K tiles, the item's rows, copied 16
//   bytes a lane and read back with ldmatrix. The per-lane words below cost 64 L1 wavefronts per K
//   tile at 32-row items against 4 for the weights, and the L1 pipe bounded the kernel (ncu: L1/TEX
//   85 %); chunks made 32-row items 1.3–1.4× faster and 16-row items 1.08× (H200, same run).
// - per-lane words (8-row items): each lane copies its token's B fragment (two 4-byte words) per K
//   tile into its own slot. At decode most rows of an 8-row block are padding that all read one
//   row, so these copies are cheap, and chunks measured 4–13 % slower there.
// Everything a tile needs arrives in the same cp.async group (a chunk travels with its first tile).
// CW: Marlin tile columns per warp (2 only on the 8-row slice and column kernels, MarlinParams::warp_columns):
// the warp's columns share each K tile's activation copies, reads and waits.
template <int BITS, int TT, int CW = 1>
struct MarlinTile {
  static constexpr bool kChunked = TT >= 2;
  static constexpr int kWordsPerLane = BITS == 4 ? 4 : 8;   // int32 words of a 16×64 tile per lane
  static constexpr int kWords = 32 * kWordsPerLane;          // 128 or 256
  static constexpr int kColumnSlots = kWordsPerLane / 4;     // uint4 per lane per stage and tile column
  static constexpr int kWeightSlots = CW * kColumnSlots;     // column c's from slot c·kColumnSlots on
  static constexpr int kGroups = 4 * CW;                     // 16-column groups of the warp's columns
  static constexpr int kActSlot = kWeightSlots;              // per-lane words: 2 per token tile
  static constexpr int kSlotsPerStage = kActSlot + (kChunked ? 0 : (TT + 1) / 2);
  static constexpr int kRows = 8 * TT;
  static constexpr int kChunkTiles = 4;                      // 64 k: one 128-byte line per row
  // K tiles in flight per warp: 8 for 8- and 16-row 4-bit items (40 and 48 KB per thread block, 5
  // and 4 blocks fit an SM), else 4 (8 stages for 32-row items measured 19 % slower on Qwen3 M = 256,
  // H200). A power of two, and each warp's K range starts at a multiple of it (marlin_k_split), so
  // every round of kStages tiles starts at an even tile: a group of 2, 4 or 8 tiles starts only on
  // even s, known at compile time — the group bookkeeping costs nothing on odd tiles, and a running
  // pointer replaces the group's address arithmetic. Chunked items need a multiple of kChunkTiles.
  static constexpr int kStages = marlin_k_stages(BITS, TT);
  static_assert(kStages == 4 || kStages == 8);
  static_assert(!kChunked || kStages % kChunkTiles == 0);
  // Scales travel in their own ring, one slot per stage pair and column (pair s / 2, column c: slot
  // CW·(s / 2) + c): a group starts only on even tiles.
  static constexpr int kScaleSlots = CW * kStages / 2;
  static constexpr int kChunkUint4 = kChunked ? kRows * 8 : 0;  // one activation chunk buffer
  // Chunk c's buffer is refilled when tile (c + B)·kChunkTiles is loaded, right after tile
  // (c + B)·kChunkTiles − kStages was computed; chunk c's last tile must be computed by then:
  // B·kChunkTiles ≥ kStages + kChunkTiles − 1.
  static constexpr int kActBuffers = (kStages + 2 * kChunkTiles - 2) / kChunkTiles;
};

// Shared memory of one warp: the cp.async ring (weight and scale slots, then the activation chunk
// buffers) during the K loop, then (after the loop has drained) the warp's partial sums for the
// K-split reduction. uint4 units.
template <int BITS, int TT, int CW = 1>
__host__ __device__ constexpr int marlin_warp_smem_uint4() {
  using Tile = MarlinTile<BITS, TT, CW>;
  constexpr int ring =
      (Tile::kStages * Tile::kSlotsPerStage + Tile::kScaleSlots) * 32 + Tile::kActBuffers * Tile::kChunkUint4;
  constexpr int partial = Tile::kGroups * TT * 32;  // float[groups][TT][4][32] = groups·TT·32 uint4
  return ring > partial ? ring : partial;
}
template <int BITS, int TT, int CW = 1>
constexpr std::size_t marlin_smem_bytes() {
  return std::size_t{4} * marlin_warp_smem_uint4<BITS, TT, CW>() * sizeof(uint4);
}

// Position of column n's scale in a channelwise-permuted row (chunks of 32:
// out[32b + 8i + m] = S[32b + 2i + o_m], o = (0,1,8,9,16,17,24,25)), inverted.
__device__ inline std::int64_t channelwise_position(std::int64_t n) {
  const int r = static_cast<int>(n & 31);
  const int half = r >> 1;
  return (n & ~std::int64_t{31}) + 8 * (half & 3) + 2 * (half >> 2) + (r & 1);
}

// The lane's 8 scales of Marlin tile column nt when G == 1 (columns 64·nt + g + 16i and + 8, i < 4),
// gathered from the channelwise-permuted row of `expert`, in the grouped order set_scales takes
// (uint4_at(result, i) = columns c, c + 8 of 16-column group i).
__device__ inline uint4 channelwise_lane_scales(const MarlinParams& p, int expert, int nt, int g) {
  const std::uint16_t* row = p.scales + static_cast<std::int64_t>(expert) * p.n;
  std::uint32_t sc[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const std::int64_t col = 64 * nt + g + 16 * i;
    sc[i] = static_cast<std::uint32_t>(__ldg(row + channelwise_position(col))) |
            (static_cast<std::uint32_t>(__ldg(row + channelwise_position(col + 8))) << 16);
  }
  return make_uint4(sc[0], sc[1], sc[2], sc[3]);
}

// W16 pair = round16((u − z)·s) for the two codes of pair p of `word` (4-bit: nibbles p, p+4;
// 8-bit: bytes p, p+2), one rounding each. zero2 = (base | z) in both halves; scale2 holds the two
// codes' scales (equal except on the K-shard path, where the two rows may sit in different groups).
template <typename T, int BITS>
__device__ inline std::uint32_t marlin_dequant(std::uint32_t word, int p, std::uint32_t zero2, std::uint32_t scale2) {
  if constexpr (BITS == 4) {
    const std::uint32_t x = and_or(word >> (4 * p), 0x000F000Fu, Half16<T>::kBase * 0x00010001u);
    return Half16<T>::sub_mul(x, zero2, scale2);
  } else if constexpr (std::is_same_v<T, __half>) {
    // fp16's base 1024 has ulp 1 up to 2047: room for 8-bit codes too.
    const std::uint32_t x = and_or(word >> (8 * p), 0x00FF00FFu, Half16<T>::kBase * 0x00010001u);
    return Half16<T>::sub_mul(x, zero2, scale2);
  } else {
    // bf16 cannot hold 128 + 255: through fp32, where u − z and (u − z)·s are exact.
    const float z = 8388608.0f + static_cast<float>(zero2 & 0xFFu);
    const float lo = (__uint_as_float(0x4B000000u | ((word >> (8 * p)) & 0xFFu)) - z) *
                     Half16<T>::to_float(static_cast<std::uint16_t>(scale2 & 0xFFFFu));
    const float hi = (__uint_as_float(0x4B000000u | ((word >> (8 * p + 16)) & 0xFFu)) - z) *
                     Half16<T>::to_float(static_cast<std::uint16_t>(scale2 >> 16));
    return Half16<T>::pack(lo, hi);
  }
}

// Zero point of column c + 8j of the lane's tile (j = 2·wg for column c of group wg, 2·wg + 1 for
// column c + 8), from the lane's packed zero word(s): the grouped permutation puts the 8 columns in
// consecutive entries, the interleave [0,2,4,6,1,3,5,7] (8-bit [0,2,1,3]) puts column j in field
// [0,4,1,5,2,6,3,7][j] (8-bit: word j / 4, byte [0,2,1,3][j % 4]).
template <int BITS>
__device__ inline std::uint32_t marlin_zero(const std::uint32_t (&zw)[BITS / 4], int wg, int h) {
  if constexpr (BITS == 4) {
    return (zw[0] >> (4 * wg + 16 * h)) & 0xFu;
  } else {
    return (zw[wg >> 1] >> (8 * (wg & 1) + 16 * h)) & 0xFFu;
  }
}

// (lo, lo) and (hi, hi) of a packed pair, one PRMT each.
__device__ inline std::uint32_t low_half2(std::uint32_t v) { return __byte_perm(v, 0, 0x1010); }
__device__ inline std::uint32_t high_half2(std::uint32_t v) { return __byte_perm(v, 0, 0x3232); }
__device__ inline std::uint32_t uint4_at(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// How a kernel instance finds a weight's zero point and scale: implicit zero with the group of the
// K tile (or the channelwise scale), stored zero points likewise, or (act-order K shard, symmetric
// types only) each row's group through g_idx. A template parameter, so an instance carries no code
// for the other modes: predicated-off zero-point code still costs issue slots in the K loop.
enum class QuantMode { symmetric, zero_point, k_shard };

// Per-item pointers of one lane, with the lane's offsets folded in, so the K loop only adds.
template <int BITS>
struct LaneTiles {
  const std::uint32_t* weight;   // tile (kt = 0) of this warp's tile column, at this lane's words
  std::int64_t weight_kt_stride; // words from one K tile to the next
  const std::uint16_t* scales;   // expert's scales at this lane's 8 grouped-order entries (group 0)
  const std::uint32_t* zeros;    // expert's zero words at this lane's entries (group 0), or null
};

// Whether tile kt = round + s of a K round (round ≡ 0 mod kStages, see MarlinTile::kStages) starts
// a group, so that its scales and zero points are loaded and prepared: the warp's first tile, and
// where a group of 2, 4 or 8 tiles begins — never on odd s, known at compile time. ROUND_GROUPS
// (marlin_round_groups holds for the call): only s = 0, every round, with nothing to test.
template <bool ROUND_GROUPS>
__device__ inline bool starts_group(const MarlinParams& p, int round, int s, int kt_begin) {
  if (s % 2 != 0) return false;
  if constexpr (ROUND_GROUPS) return s == 0;
  return (s == 0 && round == kt_begin) || ((round + s) & p.group_tile_mask) == 0;
}

// Whether a group of this call is exactly one K round of `stages` tiles (group_tile_mask = stages − 1:
// group 128 at 8 stages, 64 at 4), grouped scales, no K shard. Such calls run the kernel instances
// whose group starts are fixed at compile time (ROUND_GROUPS): tile s = 0 of every round and no
// other. The per-tile test, and the branches around the other even s, which ptxas cannot prove
// untaken, cost 12 instructions a K tile at 8-row items (bf16 uint4b8, SASS: 95.6 → 84.0) and 12 at
// 16-row items (104.8 → 92.8); on the H200 the decode and 16-row cells of `moeval bench` ran 2–3.5 %
// faster, the wgmma cells up to 5 %.
inline bool marlin_round_groups(const MarlinParams& p, int stages) {
  return !p.channelwise && p.g_idx == nullptr && p.group_tile_mask == stages - 1;
}

// The first K tile of warp wk of warps_k: the K tiles are split in runs of `unit` tiles (the K
// loop's round), as evenly as whole runs allow; the last warp ends at k_tiles.
__host__ __device__ constexpr int marlin_k_split(int k_tiles, int warps_k, int wk, int unit) {
  const int units = (k_tiles + unit - 1) / unit;
  const int begin = unit * (units * wk / warps_k);
  return begin < k_tiles ? begin : k_tiles;
}

// Where the next K tile to load comes from: the lane's weights, advanced one tile per load (tiles
// are loaded in order), and its activations. Chunked: where the lane's 2·TT rows 4i + lane / 8
// of the item start in A, in 16-byte units, and which of them are real (padding rows are
// zero-filled and never read). 32-bit offsets cost the registers of row indices, and a chunk's
// source per row is an add and a wide multiply-add; row · K in 64 bits took ~12 instructions a row
// and chunk (16-row items: 121 → 105 instructions a K tile, 7–10 % faster on the bench's 16-row
// cells, H200). Per-lane words: a pointer to token g's pair (2t, 2t+1) of the next tile (padding
// rows read row 0 of A, never stored).
// The scales and zero words of the next group to load, likewise advanced one group at a time.
template <int TT, bool CHUNKED = (TT >= 2)>
struct LoadCursor {
  const std::uint32_t* weight;
  const std::uint16_t* scales;
  const std::uint32_t* zeros;
  std::uint32_t a16[2 * TT];
  std::uint32_t real_rows;  // bit i: row 4i + lane / 8 is a routed slot (else padding, a16 = 0)
};
template <int TT>
struct LoadCursor<TT, false> {
  const std::uint32_t* weight;
  const std::uint16_t* scales;
  const std::uint32_t* zeros;
  const std::uint16_t* x[TT];
};

// A lane's sorted_token_ids entries, the routed slots its activation copies start from: item row
// 8·tt + lane / 4 (tt < TT) for the mma-fragment copies of 8-row items, rows 4i + lane / 8 (i < 2·TT)
// for chunk copies; p.num_slots (padding) at and past the item's rows. A kernel may read them ahead
// of its K loop (the column kernel reads its first unit's together with the block count).
template <int TT, bool CHUNKED = (TT >= 2)>
struct LaneRows {
  std::int64_t sid[CHUNKED ? 2 * TT : TT];
};

template <int TT>
__device__ inline LaneRows<TT> lane_rows(const MarlinParams& p, std::int64_t row0, int rows, int lane) {
  constexpr bool kChunked = TT >= 2;
  LaneRows<TT> lr;
#pragma unroll
  for (int i = 0; i < (kChunked ? 2 * TT : TT); ++i) {
    const int r = kChunked ? 4 * i + (lane >> 3) : 8 * i + (lane >> 2);
    lr.sid[i] = r < rows ? p.sorted_token_ids[row0 + r] : p.num_slots;
  }
  return lr;
}

// Per-lane words: the lane's activation words of a stage, lane-contiguous per (token tile, half),
// so each 4-byte copy and each read of a warp is one shared-memory wavefront.
template <int BITS, int TT, int CW>
__device__ inline std::uint32_t* stage_activations(uint4* stage, int lane) {
  return reinterpret_cast<std::uint32_t*>(stage - lane + 32 * MarlinTile<BITS, TT, CW>::kActSlot) + lane;
}

// Activation chunk buffer: row r's 16-byte piece q (k = 8q .. 8q + 7 of the chunk) sits at unit
// 8r + (q ^ (r % 8)), so the 8 rows an ldmatrix phase reads hit 8 different bank groups.
__device__ inline int chunk_unit(int row, int piece) { return 8 * row + (piece ^ (row & 7)); }

// Copies the chunk whose first K tile is kc into `buf` (the lane's piece q = lane % 8 of each of its
// rows 4i + lane / 8); pieces past kt_end are zero-filled without a read. Row 4i + r's piece sits at
// chunk_unit(4i + r, q) = 32i + 8r + ((q ^ r) ^ 4·(i % 2)) for r < 4: two lane offsets, the rest
// immediates. The source is A + 16·(a16 + piece) bytes, inside A for every row: a padding row has
// a16 = 0 (row 0), and a piece past the K range is read from piece 0 (neither is read: zero-fill).
template <int TT>
__device__ inline void marlin_load_chunk(uint4* buf, const LoadCursor<TT>& cur, const MarlinParams& p, int kc, int kt_end,
                                         int lane) {
  const int q = lane & 7;
  const int r = lane >> 3;
  const bool in_k = kc + (q >> 1) < kt_end;
  const std::uint32_t piece = in_k ? 2u * static_cast<std::uint32_t>(kc) + static_cast<std::uint32_t>(q) : 0u;
  const int unit_even = chunk_unit(r, q);  // row 4i + r at unit_even + 32i (even i), (unit_even ^ 4) + 32i (odd i)
  const char* a = reinterpret_cast<const char*>(p.a);
#pragma unroll
  for (int i = 0; i < 2 * TT; ++i) {
    const bool fill = in_k && ((cur.real_rows >> i) & 1u) != 0;
    copy_async_16_or_zero(buf + 32 * i + (i % 2 == 0 ? unit_even : unit_even ^ 4),
                          a + 16ull * (cur.a16[i] + piece), fill);
  }
}

// B fragments (b0, b1 of mma.m16n8k16) of token tiles tt and tt + 1 (x4) or of tile tt (x2), for
// K tile j of a chunk: matrices (tile, k 0–7), (tile, k 8–15) in lane order 0–7, 8–15, 16–23, 24–31.
// Shared-memory addresses are 32-bit byte addresses.
__device__ inline void ldmatrix_x4(std::uint32_t (&r)[4], unsigned a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
__device__ inline void ldmatrix_x2(std::uint32_t& r0, std::uint32_t& r1, unsigned a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(a));
}
// The lane's ldmatrix row in a chunk buffer for K tile 0, in bytes: row 8·(lane / 16) + lane % 8,
// piece (lane / 8) % 2. Piece 2j + h of row r sits at unit 8r + ((2j + h) ^ (r % 8)), which is
// (8r + (h ^ (r % 8))) ^ 2j: tile j's address is tile 0's with bits 5–6 flipped, one LOP3 a tile.
__device__ inline unsigned ldmatrix_lane_offset(int lane) {
  return 16u * static_cast<unsigned>(chunk_unit(8 * (lane >> 4) + (lane & 7), (lane >> 3) & 1));
}
template <int TT>
__device__ inline void load_b_fragments(std::uint32_t (&b)[TT][2], unsigned buf, int j, unsigned lane_offset) {
  const unsigned a = buf + (lane_offset ^ (32u * static_cast<unsigned>(j)));
  if constexpr (TT == 1) {
    ldmatrix_x2(b[0][0], b[0][1], a);
  } else {
#pragma unroll
    for (int tt = 0; tt < TT; tt += 2) {
      std::uint32_t r[4];
      ldmatrix_x4(r, a + 1024u * static_cast<unsigned>(tt));  // rows 8·tt on: 64·tt units
      b[tt][0] = r[0];
      b[tt][1] = r[1];
      b[tt + 1][0] = r[2];
      b[tt + 1][1] = r[3];
    }
  }
}

// Shared-memory addresses of a stage for one lane: its weight slot 0 (stage base + 16·lane) and its
// activation word 0 (stage base + 4·lane; the words sit from slot kActSlot on, see
// stage_activations), as 32-bit addresses that the caller forms from per-lane bases plus
// compile-time stage offsets.
struct StageAddress {
  unsigned weight;
  unsigned act;
};

// scale_slot: the lane's slot of column 0 for this stage pair (column c's 32·c uint4 on); zw: the
// zero words of each column.
template <typename T, int BITS, int TT, QuantMode MODE, int CW>
__device__ inline void marlin_load_stage(StageAddress at, uint4* scale_slot, uint4* chunk, bool chunk_start, bool group_start,
                                         std::uint32_t (&zw)[CW][BITS / 4], const MarlinParams& p, const LaneTiles<BITS>& lt,
                                         LoadCursor<TT>& cur, int kt, int kt_end, int lane) {
  using Tile = MarlinTile<BITS, TT, CW>;
  // Tile columns are adjacent in global memory: column c of the warp is kWords words on per c.
#pragma unroll
  for (int i = 0; i < Tile::kWeightSlots; ++i) {
    copy_async_16_at(at.weight + 512u * i,
                     cur.weight + Tile::kWords * (i / Tile::kColumnSlots) + 4 * (i % Tile::kColumnSlots));
  }
  cur.weight += lt.weight_kt_stride;
  if constexpr (Tile::kChunked) {
    if (chunk_start) marlin_load_chunk<TT>(chunk, cur, p, kt, kt_end, lane);
  } else {
    // Token g's pairs (2t, 2t+1) and (2t+8, 2t+9) of this tile: the B fragment of token tile tt.
    const unsigned act = at.act + 512u * Tile::kActSlot;
#pragma unroll
    for (int tt = 0; tt < TT; ++tt) {
      copy_async_4_at(act + 256u * tt, cur.x[tt]);
      copy_async_4_at(act + 256u * tt + 128u, cur.x[tt] + 8);
      cur.x[tt] += 16;
    }
  }
  if (MODE != QuantMode::k_shard && group_start) {
#pragma unroll
    for (int c = 0; c < CW; ++c) {
      if (!p.channelwise) copy_async_16_cached(scale_slot + 32 * c, cur.scales + 64 * c);
      if constexpr (MODE == QuantMode::zero_point) {
        const std::uint32_t* z = cur.zeros + c * (64 * BITS / 32);
        if constexpr (BITS == 4) {
          zw[c][0] = __ldg(z);
        } else {
          const uint2 v = __ldg(reinterpret_cast<const uint2*>(z));
          zw[c][0] = v.x;
          zw[c][1] = v.y;
        }
      }
    }
    cur.scales += p.n;
    if constexpr (MODE == QuantMode::zero_point) cur.zeros += p.n * BITS / 32;
  }
}

// Scales and zero points of the lane's 8 columns in one group, prepared as the dequantization uses
// them: [2·wg] for column c of 16-column group wg, [2·wg + 1] for column c + 8; each value in both
// halves (zero: base | z). Rebuilt only where a group starts.
struct GroupParams {
  std::uint32_t scale2[8];
  std::uint32_t zero2[8];
};

template <typename T>
__device__ inline void set_scales(GroupParams& gp, const uint4& s) {
#pragma unroll
  for (int wg = 0; wg < 4; ++wg) {
    gp.scale2[2 * wg] = low_half2(uint4_at(s, wg));
    gp.scale2[2 * wg + 1] = high_half2(uint4_at(s, wg));
  }
}

template <typename T, int BITS>
__device__ inline void set_zeros(GroupParams& gp, const std::uint32_t (&zw)[BITS / 4]) {
#pragma unroll
  for (int wg = 0; wg < 4; ++wg) {
    gp.zero2[2 * wg] = (Half16<T>::kBase | marlin_zero<BITS>(zw, wg, 0)) * 0x00010001u;
    gp.zero2[2 * wg + 1] = (Half16<T>::kBase | marlin_zero<BITS>(zw, wg, 1)) * 0x00010001u;
  }
}

// K-shard scales: the lane's four rows of tile kt may sit in four groups (g_idx is only sorted,
// groups have uneven sizes on a rank). scale_rows[r] = the 8 grouped-order scales of row r's group.
template <int BITS>
__device__ inline void marlin_kshard_scales(uint4 (&scale_rows)[4], const MarlinParams& p, int expert,
                                            const LaneTiles<BITS>& lt, int kt, int t) {
  const std::int32_t* g = p.g_idx + std::int64_t(expert) * p.k + 16 * kt + 2 * t;
  const int rows[4] = {0, 1, 8, 9};
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    int group = __ldg(g + rows[r]);
    group = group < 0 ? 0 : group >= p.groups ? p.groups - 1 : group;  // never read outside the scales
    scale_rows[r] = __ldg(reinterpret_cast<const uint4*>(lt.scales + std::int64_t(group) * p.n));
  }
}

// The A fragment of 16-column group wg of a lane's K tile from its words w (4-bit: word wg; 8-bit:
// words 2wg, 2wg + 1), one rounding each: a[0] column c / k 2t..2t+1, a[1] column c + 8 / k 2t..,
// a[2] column c / k 2t+8.., a[3] column c + 8 / k 2t+8... zero_lo/zero_hi: columns c and c + 8;
// scale_lo/scale_hi: columns c and c + 8, [0] for rows (2t, 2t+1), [1] for rows (2t+8, 2t+9)
// (different only on the K-shard path, where the two row pairs may sit in different groups).
template <typename T, int BITS>
__device__ inline void marlin_dequant_fragment(std::uint32_t (&a)[4], const std::uint32_t* w, int wg, std::uint32_t zero_lo,
                                               std::uint32_t zero_hi, const std::uint32_t (&scale_lo)[2],
                                               const std::uint32_t (&scale_hi)[2]) {
  if constexpr (BITS == 4) {
    const std::uint32_t word = w[wg];
    a[0] = marlin_dequant<T, 4>(word, 0, zero_lo, scale_lo[0]);  // column c, k 2t..2t+1
    a[2] = marlin_dequant<T, 4>(word, 1, zero_lo, scale_lo[1]);  // column c, k 2t+8..2t+9
    a[1] = marlin_dequant<T, 4>(word, 2, zero_hi, scale_hi[0]);  // column c+8, k 2t..2t+1
    a[3] = marlin_dequant<T, 4>(word, 3, zero_hi, scale_hi[1]);  // column c+8, k 2t+8..2t+9
  } else {
    a[0] = marlin_dequant<T, 8>(w[2 * wg], 0, zero_lo, scale_lo[0]);
    a[2] = marlin_dequant<T, 8>(w[2 * wg], 1, zero_lo, scale_lo[1]);
    a[1] = marlin_dequant<T, 8>(w[2 * wg + 1], 0, zero_hi, scale_hi[0]);
    a[3] = marlin_dequant<T, 8>(w[2 * wg + 1], 1, zero_hi, scale_hi[1]);
  }
}

// acc[4c + wg]: 16-column group wg of the warp's column c; gp[c]: that column's group parameters.
template <typename T, int BITS, int TT, QuantMode MODE, int CW>
__device__ inline void marlin_compute_stage(float (&acc)[4 * CW][TT][4], uint4* slots, unsigned chunk, unsigned lane_offset,
                                            int j, const GroupParams (&gp)[CW], const MarlinParams& p, int expert,
                                            const LaneTiles<BITS>& lt, int kt, int lane) {
  using Tile = MarlinTile<BITS, TT, CW>;
  static_assert(CW == 1 || MODE != QuantMode::k_shard, "the K-shard path runs one tile column per warp");
  const int t = lane & 3;
  std::uint32_t b[TT][2];
  if constexpr (Tile::kChunked) {
    load_b_fragments<TT>(b, chunk, j, lane_offset);
  } else {
    const std::uint32_t* act = stage_activations<BITS, TT, CW>(slots, lane);
#pragma unroll
    for (int tt = 0; tt < TT; ++tt) {
      b[tt][0] = act[64 * tt];
      b[tt][1] = act[64 * tt + 32];
    }
  }
  std::uint32_t w[CW * Tile::kWordsPerLane];  // column c's words from c·kWordsPerLane on
#pragma unroll
  for (int i = 0; i < Tile::kWeightSlots; ++i) {
    const uint4 v = slots[32 * i];
    w[4 * i] = v.x;
    w[4 * i + 1] = v.y;
    w[4 * i + 2] = v.z;
    w[4 * i + 3] = v.w;
  }
  uint4 scale_rows[4];
  if constexpr (MODE == QuantMode::k_shard) marlin_kshard_scales<BITS>(scale_rows, p, expert, lt, kt, t);
#pragma unroll
  for (int wg = 0; wg < Tile::kGroups; ++wg) {  // the words of group wg of column wg / 4 are word wg (8-bit: 2wg, 2wg + 1)
    const GroupParams& cp = gp[wg / 4];
    const int cg = wg % 4;
    std::uint32_t scale_lo[2], scale_hi[2];  // [0]: rows (2t, 2t+1), [1]: rows (2t+8, 2t+9)
    if constexpr (MODE == QuantMode::k_shard) {
      const std::uint32_t r0 = uint4_at(scale_rows[0], cg), r1 = uint4_at(scale_rows[1], cg);
      const std::uint32_t r8 = uint4_at(scale_rows[2], cg), r9 = uint4_at(scale_rows[3], cg);
      scale_lo[0] = __byte_perm(r0, r1, 0x5410);
      scale_lo[1] = __byte_perm(r8, r9, 0x5410);
      scale_hi[0] = __byte_perm(r0, r1, 0x7632);
      scale_hi[1] = __byte_perm(r8, r9, 0x7632);
    } else {
      scale_lo[0] = scale_lo[1] = cp.scale2[2 * cg];
      scale_hi[0] = scale_hi[1] = cp.scale2[2 * cg + 1];
    }
    std::uint32_t a[4];
    marlin_dequant_fragment<T, BITS>(a, w, wg, cp.zero2[2 * cg], cp.zero2[2 * cg + 1], scale_lo, scale_hi);
#pragma unroll
    for (int tt = 0; tt < TT; ++tt) Half16<T>::mma(acc[wg][tt], a, b[tt][0], b[tt][1]);
  }
}

// The K loop of both Marlin kernels over tiles [kt_begin, kt_end): load(s, round) copies tile
// round + s into stage s, compute(s, round) waits for it and uses it (s is a compile-time constant
// once the loops unroll; round ≡ kt_begin mod kStages). One cp.async group per K tile, empty ones
// included, so "all but the newest kStages − 1 groups are complete" always means "the tile about to
// be computed has landed"; a stage is refilled right after the tile in it was computed.
// The loop is its prologue (the first kStages tiles, one group each) and then its rounds; a kernel
// that overlaps an item's prologue with the previous item's epilogue calls the two apart.
template <int kStages, typename Load>
__device__ inline void pipelined_k_prologue(int kt_begin, int kt_end, Load& load) {
#pragma unroll
  for (int s = 0; s < kStages; ++s) {
    if (kt_begin + s < kt_end) load(s, kt_begin);
    commit_async();
  }
}

template <int kStages, typename Load, typename Compute>
__device__ inline void pipelined_k_rounds(int kt_begin, int kt_end, Load& load, Compute& compute) {
  int kt = kt_begin;
  // Rounds whose refills all exist: no bounds checks in the hot loop.
  for (; kt + 2 * kStages <= kt_end; kt += kStages) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      compute(s, kt);
      load(s, kt + kStages);
      commit_async();
    }
  }
  // The last (up to two) rounds: some tiles or refills are past the K range.
  for (; kt < kt_end; kt += kStages) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      if (kt + s < kt_end) {
        compute(s, kt);
        if (kt + s + kStages < kt_end) load(s, kt + kStages);
        commit_async();
      }
    }
  }
}

template <int kStages, typename Load, typename Compute>
__device__ inline void pipelined_k_loop(int kt_begin, int kt_end, Load& load, Compute& compute) {
  pipelined_k_prologue<kStages>(kt_begin, kt_end, load);
  pipelined_k_rounds<kStages>(kt_begin, kt_end, load, compute);
}

// One arrival on a counter word of the workspace, (call stamp << 32) | arrivals: a word whose stamp
// is not this call's counts as zero arrivals, so the workspace needs no clearing before a call
// (call_stamp in marlin_params.h: which leftovers can never match). Returns the arrivals before this
// one. The caller that completes the count writes the word back to 0, so a replayed CUDA graph (the
// same stamp again) starts from zero too. One thread per arrival.
__device__ inline unsigned stamped_arrival(unsigned long long* word, std::uint32_t call_stamp) {
  const unsigned long long stamp = static_cast<unsigned long long>(call_stamp) << 32;
  unsigned long long seen = *reinterpret_cast<volatile unsigned long long*>(word);
  for (;;) {
    const unsigned long long count = (seen & ~0xFFFFFFFFull) == stamp ? (seen & 0xFFFFFFFFull) : 0;
    const unsigned long long prev = atomicCAS(word, seen, stamp | (count + 1));
    if (prev == seen) return static_cast<unsigned>(count);
    seen = prev;
  }
}

// Stores a lane's fp32 sums, held in the mma C layout, as 16-bit outputs: item rows tt·8 + 2t +
// (j & 1) (tt < TT, j < 4) at columns col0 + 8·(j >> 1) + 16·gi (gi < GROUPS), sum(gi, tt, j); times
// the routing weight where the epilogue multiplies, then one rounding. slot_of(r): the routed slot
// of item row r (its sorted_token_ids entry); weight_of(r, slot): that slot's routing weight, asked
// only where the epilogue multiplies. Padding rows (≥ rows, or ids outside [0, num_slots)) are not
// stored; rows of a non-local (−1) expert (computes = false) are zeros.
template <typename T, int TT, int GROUPS, typename SlotOf, typename WeightOf, typename Sum>
__device__ inline void store_marlin_sums(const MarlinParams& p, int rows, std::int64_t col0, bool computes, int t,
                                         const SlotOf& slot_of, const WeightOf& weight_of, const Sum& sum) {
#pragma unroll
  for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = tt * 8 + 2 * t + (j & 1);
      if (r >= rows) continue;
      const std::int64_t sid = slot_of(r);
      if (sid < 0 || sid >= p.num_slots) continue;
      const float w = p.topk_weights != nullptr ? weight_of(r, sid) : 1.0f;
      std::uint16_t* out = p.c + sid * p.n + col0 + 8 * (j >> 1);
#pragma unroll
      for (int gi = 0; gi < GROUPS; ++gi) {
        const float v = computes ? (p.topk_weights != nullptr ? sum(gi, tt, j) * w : sum(gi, tt, j)) : 0.0f;
        out[16 * gi] = Half16<T>::from_float(v);
      }
    }
  }
}

// The mma.sync kernels' form: item row r is row row0 + r of sorted_token_ids, and the routing
// weights are read from global memory.
template <typename T, int TT, int GROUPS, typename Sum>
__device__ inline void store_marlin_sums(const MarlinParams& p, std::int64_t row0, int rows, std::int64_t col0,
                                         bool computes, int t, const Sum& sum) {
  store_marlin_sums<T, TT, GROUPS>(
      p, rows, col0, computes, t, [&](int r) { return std::int64_t{p.sorted_token_ids[row0 + r]}; },
      [&](int, std::int64_t sid) { return p.topk_weights[sid]; }, sum);
}

// One warp's sums over K tiles [kt_begin, kt_end) of Marlin tile columns nt .. nt + CW − 1 for the
// 8·TT rows row0 .. row0 + rows − 1 of a moe block of `expert` (which must be local: 0 ≤ expert <
// E), added into acc (acc[4c + wg]: group wg of column nt + c). warp_smem: the warp's ring
// (marlin_warp_smem_uint4); kt_begin a multiple of kStages. ROUND_GROUPS: marlin_round_groups holds
// for this call (see there).
// lane_rows: the lane's sorted_token_ids entries of the item (see LaneRows).
template <typename T, int BITS, int TT, QuantMode MODE, bool ROUND_GROUPS, int CW = 1>
__device__ inline void marlin_warp_k_range(float (&acc)[4 * CW][TT][4], const MarlinParams& p, uint4* warp_smem, int expert,
                                           const LaneRows<TT>& lane_rows, int nt, int kt_begin, int kt_end, int lane) {
  using Tile = MarlinTile<BITS, TT, CW>;
  constexpr int kStages = Tile::kStages;
  const int g = lane >> 2;
  const int t = lane & 3;
  uint4* slots = warp_smem + lane;  // stage s, slot i: slots[32·(s·kSlotsPerStage + i)]
  uint4* scale_slots = warp_smem + 32 * kStages * Tile::kSlotsPerStage + lane;  // pair s / 2, column c: [32·(CW·(s / 2) + c)]
  uint4* act_buffers = warp_smem + 32 * (kStages * Tile::kSlotsPerStage + Tile::kScaleSlots);
  const unsigned act_shared = shared_address(act_buffers);
  const unsigned ldsm_offset = ldmatrix_lane_offset(lane);
  LoadCursor<TT> cursor;
  if constexpr (Tile::kChunked) {
    cursor.real_rows = 0;
#pragma unroll
    for (int i = 0; i < 2 * TT; ++i) {
      const std::int64_t sid = lane_rows.sid[i];
      // Padding rows are zero-filled: their mma columns are never stored, and columns are independent.
      // a16 + piece < 2^32: marlin_moe rejects an A of more than 2^35 − 16 elements on this path.
      const bool real = sid >= 0 && sid < p.num_slots;
      cursor.a16[i] = real ? static_cast<std::uint32_t>((sid / p.top_k) * (p.k / 8)) : 0u;
      cursor.real_rows |= static_cast<std::uint32_t>(real) << i;
    }
  } else {
#pragma unroll
    for (int tt = 0; tt < TT; ++tt) {
      const std::int64_t sid = lane_rows.sid[tt];
      // Padding columns of the mma read row 0 of A: never stored, and the columns are independent.
      cursor.x[tt] = ((sid >= 0 && sid < p.num_slots) ? p.a + (sid / p.top_k) * p.k : p.a) + 16 * kt_begin + 2 * t;
    }
  }
  LaneTiles<BITS> lt;
  lt.weight_kt_stride = static_cast<std::int64_t>(p.n_tiles) * Tile::kWords;
  lt.weight = p.qweight + static_cast<std::int64_t>(expert) * p.k_tiles * lt.weight_kt_stride +
              static_cast<std::int64_t>(nt) * Tile::kWords + lane * Tile::kWordsPerLane;
  lt.scales = p.scales + static_cast<std::int64_t>(expert) * p.groups * p.n + 64 * nt + 8 * g;
  lt.zeros = p.zeros == nullptr ? nullptr
                                : p.zeros + static_cast<std::int64_t>(expert) * p.groups * (p.n * BITS / 32) +
                                      (64 * nt + 8 * g) * BITS / 32;
  GroupParams gp[CW];
#pragma unroll
  for (int c = 0; c < CW; ++c) {
#pragma unroll
    for (int i = 0; i < 8; ++i) gp[c].zero2[i] = (Half16<T>::kBase | p.implicit_zero) * 0x00010001u;
    if (MODE != QuantMode::k_shard && p.channelwise) {
      set_scales<T>(gp[c], channelwise_lane_scales(p, expert, nt + c, g));  // G == 1: once for the whole K
    }
  }
  std::uint32_t zw[Tile::kStages / 2][CW][BITS / 4];  // zero words of each column, one set per stage pair
  cursor.weight = lt.weight + kt_begin * lt.weight_kt_stride;
  cursor.scales = lt.scales + std::int64_t(p.channelwise ? 0 : kt_begin >> p.group_tile_shift) * p.n;
  if constexpr (MODE == QuantMode::zero_point) {
    cursor.zeros = lt.zeros + std::int64_t(p.channelwise ? 0 : kt_begin >> p.group_tile_shift) * (p.n * BITS / 32);
  }
  auto stage = [&](int s) { return slots + 32 * Tile::kSlotsPerStage * s; };
  // The copies' destinations: per-lane bases plus stage offsets known at compile time.
  const unsigned ring = shared_address(warp_smem);
  const unsigned weight_base = ring + 16u * static_cast<unsigned>(lane);
  const unsigned act_base = ring + 4u * static_cast<unsigned>(lane);
  auto stage_address = [&](int s) {
    const unsigned offset = 512u * Tile::kSlotsPerStage * static_cast<unsigned>(s);
    return StageAddress{weight_base + offset, act_base + offset};
  };
  // Chunked: every loop below steps kt by kStages from kt_begin, a multiple of kChunkTiles, so
  // stage s holds tile s % kChunkTiles of its chunk, known at compile time. The chunk buffers
  // are used in order, so a running index each for loads and computes replaces any division.
  int load_buf = 0, compute_buf = 0;
  auto next_buf = [](int b) { return b + 1 == Tile::kActBuffers ? 0 : b + 1; };
  // Loads tile round + s into stage s (s is a compile-time constant once the loops unroll).
  auto load = [&](int s, int round) {
    const bool chunk_start = Tile::kChunked && s % Tile::kChunkTiles == 0;
    marlin_load_stage<T, BITS, TT, MODE, CW>(stage_address(s), scale_slots + 32 * CW * (s / 2),
                                         act_buffers + Tile::kChunkUint4 * load_buf, chunk_start,
                                         starts_group<ROUND_GROUPS>(p, round, s, kt_begin), zw[s / 2], p, lt, cursor,
                                         round + s, kt_end, lane);
    if (chunk_start) load_buf = next_buf(load_buf);
  };
  // Computes tile round + s from stage s and its chunk (group parameters refreshed where a group starts).
  auto compute = [&](int s, int round) {
    wait_async<kStages - 1>();
    if constexpr (Tile::kChunked) __syncwarp();  // the chunk's rows were copied by other lanes of the warp
    if (MODE != QuantMode::k_shard && starts_group<ROUND_GROUPS>(p, round, s, kt_begin)) {
#pragma unroll
      for (int c = 0; c < CW; ++c) {
        if (!p.channelwise) set_scales<T>(gp[c], scale_slots[32 * (CW * (s / 2) + c)]);
        if constexpr (MODE == QuantMode::zero_point) set_zeros<T, BITS>(gp[c], zw[s / 2][c]);
      }
    }
    const int j = s % Tile::kChunkTiles;
    marlin_compute_stage<T, BITS, TT, MODE, CW>(acc, stage(s), act_shared + 16u * Tile::kChunkUint4 * compute_buf,
                                            ldsm_offset, j, gp, p, expert, lt, round + s, lane);
    if (Tile::kChunked && j == Tile::kChunkTiles - 1) compute_buf = next_buf(compute_buf);
  };
  // A scale slot is refilled (at an even s) only after the tile before it was computed, and that
  // tile's group parameters were taken into registers where its group started.
  pipelined_k_loop<kStages>(kt_begin, kt_end, load, compute);
  wait_async<0>();  // the ring is free again when this returns
}

// The same for rows row0 .. row0 + rows − 1 of sorted_token_ids, read here.
template <typename T, int BITS, int TT, QuantMode MODE, bool ROUND_GROUPS, int CW = 1>
__device__ inline void marlin_warp_k_range(float (&acc)[4 * CW][TT][4], const MarlinParams& p, uint4* warp_smem, int expert,
                                           std::int64_t row0, int rows, int nt, int kt_begin, int kt_end, int lane) {
  marlin_warp_k_range<T, BITS, TT, MODE, ROUND_GROUPS, CW>(acc, p, warp_smem, expert, lane_rows<TT>(p, row0, rows, lane), nt,
                                                          kt_begin, kt_end, lane);
}

template <int TT>
__host__ __device__ constexpr int marlin_blocks_per_sm() { return marlin_resident_blocks(TT); }

// moe_align's blocks a launch works on: its count, within the capacity of the caller's buffers.
__device__ inline std::int64_t marlin_block_count(const MarlinParams& p) {
  return min(static_cast<std::int64_t>(*p.num_tokens_post_padded / p.block_size), p.block_capacity);
}

// Work item `item` of a thread-block kernel: (moe block, row group of ROWS rows, N item), N fastest.
struct MarlinItem {
  int n_item;
  int expert;
  bool computes;      // a local expert; rows of a non-local (−1) one are stored as zeros
  std::int64_t row0;  // the item's first row of sorted_token_ids
  int rows;           // rows of the block in this row group
};
template <int ROWS>
__device__ inline MarlinItem marlin_item(const MarlinParams& p, std::int64_t item) {
  MarlinItem it;
  it.n_item = static_cast<int>(item % p.n_items);
  const std::int64_t rest = item / p.n_items;
  const int row_group = static_cast<int>(rest % p.row_groups);
  const std::int64_t block = rest / p.row_groups;
  it.expert = p.expert_ids[block];
  it.computes = it.expert >= 0 && it.expert < p.num_experts;
  it.row0 = block * p.block_size + static_cast<std::int64_t>(row_group) * ROWS;
  it.rows = min(ROWS, p.block_size - row_group * ROWS);
  return it;
}

template <typename T, int BITS, int TT, QuantMode MODE, bool ROUND_GROUPS>
__global__ void __launch_bounds__(kMarlinThreads, marlin_blocks_per_sm<TT>()) marlin_moe_kernel(const MarlinParams p) {
  using Tile = MarlinTile<BITS, TT>;
  constexpr int kStages = Tile::kStages;
  constexpr int kWarpSmem = marlin_warp_smem_uint4<BITS, TT>();
  constexpr int kRows = 8 * TT;
  extern __shared__ uint4 smem[];  // 4 · kWarpSmem (marlin_smem_bytes)

  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int g = lane >> 2;
  const int t = lane & 3;
  const int warps_n = 4 / p.warps_k;
  const int wn = warp % warps_n;
  const int wk = warp / warps_n;
  uint4* warp_smem = smem + warp * kWarpSmem;

  const std::int64_t items = marlin_block_count(p) * p.row_groups * p.n_items;
  const int kt_begin = marlin_k_split(p.k_tiles, p.warps_k, wk, kStages);
  const int kt_end = marlin_k_split(p.k_tiles, p.warps_k, wk + 1, kStages);

  // Items are dealt round-robin: the thread blocks running at one time read neighbouring tile
  // columns of the same K bands, which keeps DRAM pages open (H200, Mixtral w13 M = 16: 239 →
  // 169 µs against contiguous runs per block; activations come through cp.async, not L1 reuse).
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const MarlinItem it = marlin_item<kRows>(p, item);
    const int expert = it.expert;
    const bool computes = it.computes;
    const std::int64_t row0 = it.row0;
    const int rows = it.rows;
    const int nt = it.n_item * warps_n + wn;  // this warp's Marlin tile column
    const bool warp_in_n = nt < p.n_tiles;

    float acc[4][TT][4];
#pragma unroll
    for (int wg = 0; wg < 4; ++wg) {
#pragma unroll
      for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[wg][tt][j] = 0.0f;
      }
    }

    if constexpr (Tile::kChunked) __syncwarp();  // the previous item's chunk reads are done before refills
    if (computes && warp_in_n && kt_begin < kt_end) {
      marlin_warp_k_range<T, BITS, TT, MODE, ROUND_GROUPS>(acc, p, warp_smem, expert, row0, rows, nt, kt_begin, kt_end,
                                                           lane);
    }

    if (p.warps_k > 1) {
      // Each warp's partial sums go into its own (drained) ring; warp wk = 0 of each column adds the
      // others in warp order.
      float* mine = reinterpret_cast<float*>(warp_smem);
#pragma unroll
      for (int wg = 0; wg < 4; ++wg) {
#pragma unroll
        for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
          for (int j = 0; j < 4; ++j) mine[((wg * TT + tt) * 4 + j) * 32 + lane] = acc[wg][tt][j];
        }
      }
      __syncthreads();
      if (wk == 0) {
        for (int w = 1; w < p.warps_k; ++w) {
          const float* other = reinterpret_cast<const float*>(smem + (wn + w * warps_n) * kWarpSmem);
#pragma unroll
          for (int wg = 0; wg < 4; ++wg) {
#pragma unroll
            for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
              for (int j = 0; j < 4; ++j) acc[wg][tt][j] += other[((wg * TT + tt) * 4 + j) * 32 + lane];
            }
          }
        }
      }
      __syncthreads();  // the rings are refilled by the next item
    }

    if (wk == 0 && warp_in_n) {
      store_marlin_sums<T, TT, 4>(p, row0, rows, 64 * nt + g, computes, t,
                                  [&](int wg, int tt, int j) { return acc[wg][tt][j]; });
    }
  }
}

template <typename T, int BITS, int TT, QuantMode MODE>
void launch_marlin_tiles(const MarlinParams& params, cudaStream_t stream) {
  auto launch = [&](auto kernel) {
    launch_persistent(kernel, kMarlinThreads, params.block_capacity * params.row_groups * params.n_items, params, stream,
                      "marlin_moe", marlin_smem_bytes<BITS, TT>(), params.likely_items, params.max_grid);
  };
  if constexpr (MODE != QuantMode::k_shard) {
    if (marlin_round_groups(params, MarlinTile<BITS, TT>::kStages)) return launch(marlin_moe_kernel<T, BITS, TT, MODE, true>);
  }
  launch(marlin_moe_kernel<T, BITS, TT, MODE, false>);
}

}  // namespace moeval::kernels::detail
