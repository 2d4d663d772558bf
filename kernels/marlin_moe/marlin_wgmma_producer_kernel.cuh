// Internal: the Marlin MoE GEMM's wgmma path in its producer form, for moe blocks of 64 rows: one
// thread block per SM of three warpgroups, a producer that only copies and two consumers that only
// dequantize, multiply and store.
//
// Why: in the other form (marlin_wgmma_kernel.cuh) the warps that run the MMAs also issue every
// copy and wait for their own copies at each K tile, and the warps of a warpgroup move in lock step,
// so a copy that lands late stalls all of them. Taking out a part of its work measured 8–17 % each
// (the dequantization, the weight copies, the activation copies; H200, docs/bench.md), while its K
// loop alone, over shared memory, runs at 0.8 of the dense bf16 rate. Here the consumers wait only
// on a barrier per chunk of 4 K tiles, which the producer has filled several chunks ahead:
// - weights, scales and zero points, whose rows of an item's 8 tile columns are contiguous in
//   global memory, by the bulk copy engine (lane 0 of each producer warp issues one or two copies
//   per chunk: spread so, the large-M cells ran 5–8 % faster than with all of them from thread 0,
//   thirty-first session, docs/bench.md), each completing as transaction bytes on the chunk's
//   `full` barrier;
// - the item's activation rows, gathered through sorted_token_ids, by cp.async from all 128
//   producer threads into the 128-byte-swizzled chunk that wgmma reads (as in the other form), each
//   thread's copies arriving on `full` by themselves (cp.async.mbarrier.arrive), so no producer
//   thread ever waits for a copy;
// - the consumers release a chunk (`empty`) once no MMA reads it any more, and the producer reuses
//   it; items follow each other through the same ring, so the next item's copies run while an
//   item's sums are stored;
// - a consumer asks whether the next chunk has landed halfway through the current one (test_wait)
//   and waits at the next chunk's start only where it had not (two same-run A/Bs on the H200,
//   twenty-first session: DeepSeek-V3 w2 and Qwen3 at M = 1024–4096 0.984–0.998 of the time before,
//   the other cells 0.986–1.013).
// An earlier producer form (sixth session, not kept) copied with cp.async only, had each producer
// thread wait for its own copies and published a chunk one chunk late; it was 1.3× slower.
//
// Work item = (moe block, N item of 8 tile columns), the items of the two-warpgroup form: consumer
// warpgroup c takes tile columns 4c .. 4c + 3, warp w of it column 4c + w, with all 4 groups of each
// K tile (marlin_wgmma_tile_words, the same per-tile code), and both read the same activation chunk.
// A stage of the ring holds one chunk: the activation rows (64 × 128 bytes), the 4 K tiles of the
// item's weights in their global order (tile column after tile column, each lane's words
// contiguous), and the scale and zero-point rows of the groups that start in it (at most two: a
// group spans 2, 4 or 8 K tiles and starts on an even one).
//
// Expert tails (64-row items of 4-bit weights): moe_align gives an expert of c tokens ⌈c / 64⌉
// blocks, so an expert with c mod 64 ∈ [1, 16] ends in a block of a few rows, whose items would
// dequantize all of the expert's weights again for them (on DeepSeek-V3 at 128 ± 11 tokens per
// expert, ~40 % of the experts, ~17 % of all items). Instead the items of the block before it take
// those rows as rows 64 .. 79 of their activation chunks and issue one m64n80k16 per group in place
// of m64n64k16: the weights are dequantized once for 80 rows, while the K loop, which dequantization
// bounds at 64 rows, hardly slows. The rule (item_rows) reads only sorted_token_ids and expert_ids,
// so the items of both blocks decide alike, and it checks every row, so it holds wherever padding
// sits in a block.
//
// Registers: the thread block starts with 168 per thread (65536 / 384, rounded down to 8); the
// consumers rise to what their accumulators (128; 160 for an item with a tail) and the
// dequantization need (setmaxnreg: 224, 208 for 128-row 4-bit items), and the producer drops to the
// rest of the block's registers (56, or 88; at 40 its address state spilled).
#pragma once

#include <stdexcept>

#include "../common/mbarrier.cuh"
#include "marlin_wgmma_kernel.cuh"

namespace moeval::kernels::detail {

template <int BITS, int ROWS>
struct WgmmaProducerTile {
  // A consumer warpgroup's work is the one-warpgroup form's: 64 rows, 4 tile columns (a warp each,
  // all 4 groups), or 128 rows, 2 tile columns (two warps each, 2 groups).
  using Consumer = WgmmaTile<BITS, ROWS, 1>;
  static constexpr int kRows = ROWS;
  static constexpr int kTailRows = BITS == 4 && ROWS == 64 ? 16 : 0;  // an expert tail's rows at most
  static constexpr int kMaxRows = kRows + kTailRows;                    // rows of an item's chunks
  static constexpr int kConsumers = 2;                      // consumer warpgroups
  static constexpr int kThreads = 128 * (1 + kConsumers);   // producer warpgroup first
  static constexpr int kConsumerWarps = 4 * kConsumers;
  static constexpr int kConsumerThreads = 32 * kConsumerWarps;
  static constexpr int kGroups = Consumer::kGroups;
  static constexpr int kTileColumns = Consumer::kTileColumns * kConsumers;
  static constexpr int kChunkTiles = 4;                     // one 128-byte line of k per row
  static constexpr int kLaneBytes = Consumer::kLaneBytes;   // the lane's words of its groups: 8, 16 or 32
  static constexpr int kColumnBytes = 4 * MarlinTile<BITS, 1>::kWords;  // one K tile of one tile column
  static constexpr int kTileBytes = kTileColumns * kColumnBytes;
  static constexpr int kActBytes = kMaxRows * 128;
  static constexpr int kScaleColumnBytes = 64 * 2;          // a group's 64 scales of one tile column
  static constexpr int kZeroColumnBytes = 64 * BITS / 8;    // and its 64 zero points
  static constexpr int kGroupSlots = kChunkTiles / 2;       // group starts a chunk can hold
  // A stage: the activation chunk first (1024-byte aligned, as the 128-byte swizzle needs), then the
  // weights, the scale rows and the zero-point rows.
  static constexpr int kWeightOffset = kActBytes;
  static constexpr int kScaleOffset = kWeightOffset + kChunkTiles * kTileBytes;
  static constexpr int kZeroOffset = kScaleOffset + kGroupSlots * kTileColumns * kScaleColumnBytes;
  static constexpr int kStageBytes = (kZeroOffset + kGroupSlots * kTileColumns * kZeroColumnBytes + 1023) / 1024 * 1024;
  // As many stages as fit 220 KB with the slots and barriers, at most 8: 64 rows 6 (4-bit, 29 KB a
  // stage with the tail rows) or 4 (8-bit, 43 KB); 128 rows 8 (26 KB) or 6 (34 KB).
  static constexpr int kStages = (BITS == 4 ? (ROWS == 64 ? 6 : 8) : (ROWS == 64 ? 4 : 6));
  static constexpr int kProducerThreads = 128;
  static constexpr int kPiecesPerThread = kMaxRows * 8 / kProducerThreads;  // 16-byte pieces of a chunk
  static constexpr int kBlockPieces = kRows * 8 / kProducerThreads;        // those of the first kRows rows
  static constexpr int kPieceRowStride = kProducerThreads / 8;
  // After the ring: the routed slots and routing weights of the rows of two items (the producer
  // fills the next item's while the consumers store this one's), each item's index and rows
  // (item_rows; −1: no item left), the producer's next item, then the barriers.
  static constexpr int kSlotOffset = kStages * kStageBytes;
  static constexpr int kSlotBytes = 2 * kMaxRows * (4 + 4) + 2 * 8 + 2 * 8 + 2 * 4;  // a multiple of 8, as the barriers need
  static constexpr int kBarrierOffset = kSlotOffset + kSlotBytes;
  static constexpr int kBarriers = 2 * kStages + 4;  // full and empty per stage; slots full and empty per buffer
  static constexpr int kConsumerRegisters = BITS == 4 && ROWS == 128 ? 208 : 224;
  static constexpr int kProducerRegisters = (168 * kThreads - 128 * kConsumers * kConsumerRegisters) / 128 / 8 * 8;
  static_assert(kProducerRegisters >= 56);
  static_assert(kStageBytes % 1024 == 0 && kStages * kStageBytes + kSlotBytes + 8 * kBarriers <= 220 * 1024);
  static_assert(kSlotBytes % 8 == 0 && kPiecesPerThread * kProducerThreads == 8 * kMaxRows);
  // One weight tile of a chunk per producer warp; the two group slots' scales and zero points on
  // the four warps (the producer's bulk copies, spread over its warps).
  static_assert(kChunkTiles == kProducerThreads / 32 && 2 * kGroupSlots == kProducerThreads / 32);
};

// Where a producer thread's activation pieces of an item come from: a pointer per piece, null for
// padding rows. (32-bit offsets into A, half the registers, were the twelfth session's form for the
// kernels with tails; pointers measured 1–3 % faster on every 64-row cell, with up to 36 bytes of
// producer spills at item starts and none in the chunk loop: docs/bench.md.)
template <int PIECES>
struct PieceSources {
  const uint4* ptr[PIECES];
  __device__ void set(int i, const std::uint16_t* a, std::int64_t unit_of_a, bool real) {
    ptr[i] = real ? reinterpret_cast<const uint4*>(a) + unit_of_a : nullptr;
  }
  __device__ bool real(int i) const { return ptr[i] != nullptr; }
  // Piece i of K tile kt (2 units a tile), where real(i).
  __device__ const uint4* at(int i, int kt) const { return ptr[i] + 2 * kt; }
};

// The rows the items of moe block `it` compute: kRows, kRows + its expert's tail (up to kTailRows
// rows of the next block), or 0 where its own rows went with the block before. Block b + 1's rows
// go with block b where both hold the same local expert, b's last row is real (so b gave no rows
// away itself: a block that did has padding from row kTailRows on) and b + 1 has no real row from
// row kTailRows on. Every producer thread calls it (barrier 1 of the producer warpgroup).
template <typename Tile>
__device__ inline int item_rows(const MarlinParams& p, const MarlinItem& it, int tid) {
  if constexpr (Tile::kTailRows == 0) {
    return Tile::kRows;
  } else {
    if (!it.computes || p.block_size != Tile::kRows) return Tile::kRows;
    // Every load first, none behind another (each costs a global-memory latency, and the consumers
    // wait for this item's rows): guards by index only, the tests after.
    auto real = [&](std::int32_t sid) { return sid >= 0 && sid < p.num_slots; };
    const std::int64_t block = it.row0 / Tile::kRows;
    const bool has_next = block + 1 < p.block_capacity;  // inside the caller's buffers
    const bool has_prev = block > 0;
    const int r = Tile::kTailRows + tid;  // a row past the tail, one per thread
    static_assert(Tile::kRows - Tile::kTailRows <= Tile::kProducerThreads);
    const bool in_block = r < Tile::kRows;
    const std::int64_t count = *p.num_tokens_post_padded / p.block_size;
    const std::int32_t expert_next = has_next ? p.expert_ids[block + 1] : -1;
    const std::int32_t expert_prev = has_prev ? p.expert_ids[block - 1] : -1;
    const std::int32_t last = p.sorted_token_ids[it.row0 + Tile::kRows - 1];
    const std::int32_t before = has_prev ? p.sorted_token_ids[it.row0 - 1] : -1;
    const std::int32_t next_row = has_next && in_block ? p.sorted_token_ids[it.row0 + Tile::kRows + r] : -1;
    // The caller's row_ids hold these rows too; taking them from there keeps the ids live through
    // this function, which spilled more producer registers and measured 1.00–1.04 of the time with
    // this load (docs/bench.md).
    const std::int32_t own_row = in_block ? p.sorted_token_ids[it.row0 + r] : -1;
    const bool next = has_next && block + 1 < count && expert_next == it.expert && real(last);
    const bool prev = has_prev && expert_prev == it.expert && real(before);
    const bool next_is_tail = barrier_and<Tile::kProducerThreads>(1, !next || !real(next_row));
    const bool own_is_tail = barrier_and<Tile::kProducerThreads>(1, !prev || !real(own_row));
    if (prev && own_is_tail) return 0;
    return next && next_is_tail ? Tile::kMaxRows : Tile::kRows;
  }
}

template <int BITS, int ROWS>
constexpr std::size_t marlin_wgmma_producer_smem_bytes() {
  using Tile = WgmmaProducerTile<BITS, ROWS>;
  return std::size_t{Tile::kBarrierOffset} + 8u * Tile::kBarriers;
}

template <typename T, int BITS, int ROWS, QuantMode MODE>
__global__ void __launch_bounds__(WgmmaProducerTile<BITS, ROWS>::kThreads, 1)
    marlin_wgmma_producer_kernel(const MarlinParams p) {
  static_assert(MODE != QuantMode::k_shard, "the K-shard path runs 32-row items on mma.sync");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Tile = WgmmaProducerTile<BITS, ROWS>;
  constexpr int kStages = Tile::kStages;
  constexpr int kRows = Tile::kRows;
  extern __shared__ __align__(1024) uint4 smem[];  // marlin_wgmma_producer_smem_bytes
  char* const ring = reinterpret_cast<char*>(smem);
  constexpr int kMaxRows = Tile::kMaxRows;
  std::int32_t* const item_slots = reinterpret_cast<std::int32_t*>(ring + Tile::kSlotOffset);  // [2][kMaxRows], −1: padding
  float* const item_weights = reinterpret_cast<float*>(item_slots + 2 * kMaxRows);            // [2][kMaxRows]
  std::int64_t* const item_index = reinterpret_cast<std::int64_t*>(item_weights + 2 * kMaxRows);  // [2]
  std::int64_t* const next_item = item_index + 2;                                                   // [2]
  std::int32_t* const item_row_count = reinterpret_cast<std::int32_t*>(next_item + 2);  // [2]: item_rows, −1: done
  std::uint64_t* const full = reinterpret_cast<std::uint64_t*>(ring + Tile::kBarrierOffset);   // chunk landed
  std::uint64_t* const empty = full + kStages;                                                 // chunk read
  std::uint64_t* const slots_full = empty + kStages;                                           // slots written
  std::uint64_t* const slots_empty = slots_full + 2;                                           // slots stored
  const int tid = static_cast<int>(threadIdx.x);
  if ((shared_address(ring) & 1023u) != 0) __trap();  // the swizzled B descriptors need 1024-byte aligned chunks
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + s, Tile::kProducerThreads + 1);  // each producer thread's copies, + the bulk copies' arrival
      mbarrier_init(empty + s, Tile::kConsumerThreads);
    }
    for (int b = 0; b < 2; ++b) {
      mbarrier_init(slots_full + b, Tile::kProducerThreads);
      mbarrier_init(slots_empty + b, Tile::kConsumerThreads);
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  const std::int64_t items = marlin_block_count(p) * p.row_groups * p.n_items;
  const int k_tiles = p.k_tiles;
  const int chunks = (k_tiles + Tile::kChunkTiles - 1) / Tile::kChunkTiles;

  if (tid < Tile::kProducerThreads) {
    // The producer. Chunk u of this block (counted over its items) goes into stage u % kStages; it
    // waits until the consumers released that stage's previous chunk (parity of round u / kStages,
    // flipped: the first round finds the ring free).
    release_registers<Tile::kProducerRegisters>();
    const int q = tid & 7;  // this thread's 16-byte piece of each chunk row (k 8q .. 8q + 7)
    const std::int64_t weight_kt_stride = static_cast<std::int64_t>(p.n_tiles) * MarlinTile<BITS, 1>::kWords;
    int stage = 0;
    unsigned phase = 0;
    // Copies item `it`'s chunks into the ring: weights, scales and zero points by bulk copies from
    // thread 0, the activation pieces of its `rows` rows (src) by cp.async.
    using Sources = PieceSources<Tile::kPiecesPerThread>;
    auto copy_chunks = [&](const MarlinItem& it, int rows, const Sources& src) {
      const int nt0 = it.n_item * Tile::kTileColumns;
      const int columns = min(Tile::kTileColumns, p.n_tiles - nt0);
      const std::uint32_t* const weight = p.qweight + static_cast<std::int64_t>(it.expert) * k_tiles * weight_kt_stride +
                                          static_cast<std::int64_t>(nt0) * MarlinTile<BITS, 1>::kWords;
      const std::uint16_t* const scales = p.scales + static_cast<std::int64_t>(it.expert) * p.groups * p.n + 64 * nt0;
      const std::uint32_t* const zeros =
          MODE == QuantMode::zero_point
              ? p.zeros + static_cast<std::int64_t>(it.expert) * p.groups * (p.n * BITS / 32) + nt0 * 64 * BITS / 32
              : nullptr;
      for (int c = 0; c < chunks; ++c) {
        const int kt0 = Tile::kChunkTiles * c;
        char* const st = ring + Tile::kStageBytes * stage;
        mbarrier_wait(empty + stage, phase ^ 1u);
        if ((tid & 31) == 0) {
          // The bulk copies come from lane 0 of each producer warp (warp w: weight tile w; warp j
          // < 2: the scale rows of group slot j; warp 2 + j: its zero-point rows), not all from
          // thread 0: each warp shares its SM sub-partition's issue slots with two consumer warps,
          // and the consumers of a warpgroup move in lock step, so a producer warp that issues
          // more than the others slows every consumer. Thread 0 alone announces the chunk's bytes;
          // a copy that completes before that leaves the transaction count below zero for a while,
          // which the barrier allows (its phase still waits for thread 0's arrival).
          const int warp = tid >> 5;
          const int tiles = min(Tile::kChunkTiles, k_tiles - kt0);
          // Groups starting at tiles 0 and 2 of the chunk (channelwise: tile 0 of the K range only).
          const bool starts[Tile::kGroupSlots] = {(kt0 & p.group_tile_mask) == 0,
                                                  tiles > 2 && ((kt0 + 2) & p.group_tile_mask) == 0};
          if (tid == 0) {
            unsigned bytes = static_cast<unsigned>(tiles * columns * Tile::kColumnBytes);
#pragma unroll
            for (int j = 0; j < Tile::kGroupSlots; ++j) {
              if (!starts[j]) continue;
              if (!p.channelwise) bytes += columns * Tile::kScaleColumnBytes;
              if constexpr (MODE == QuantMode::zero_point) bytes += columns * Tile::kZeroColumnBytes;
            }
            mbarrier_arrive_expect_tx(full + stage, bytes);
          }
          if (warp < tiles) {
            bulk_copy_to_shared(st + Tile::kWeightOffset + Tile::kTileBytes * warp, weight + (kt0 + warp) * weight_kt_stride,
                                columns * Tile::kColumnBytes, full + stage);
          }
          const int j = warp % Tile::kGroupSlots;
          if (starts[j]) {
            const std::int64_t group = (kt0 + 2 * j) >> p.group_tile_shift;
            if (warp < Tile::kGroupSlots) {
              if (!p.channelwise) {
                bulk_copy_to_shared(st + Tile::kScaleOffset + j * Tile::kTileColumns * Tile::kScaleColumnBytes,
                                    scales + group * p.n, columns * Tile::kScaleColumnBytes, full + stage);
              }
            } else if constexpr (MODE == QuantMode::zero_point) {
              bulk_copy_to_shared(st + Tile::kZeroOffset + j * Tile::kTileColumns * Tile::kZeroColumnBytes,
                                  zeros + group * (p.n * BITS / 32), columns * Tile::kZeroColumnBytes, full + stage);
            }
          }
        }
        const bool in_k = kt0 + (q >> 1) < k_tiles;
#pragma unroll
        for (int i = 0; i < Tile::kPiecesPerThread; ++i) {
          if (i >= Tile::kBlockPieces && rows <= kRows) break;  // no tail: its chunk rows are never read
          const bool fill = in_k && src.real(i);
          copy_async_16_or_zero(st + 16 * chunk_unit((tid >> 3) + Tile::kPieceRowStride * i, q),
                                fill ? src.at(i, kt0) : reinterpret_cast<const uint4*>(p.a), fill);
        }
        cp_async_mbarrier_arrive(full + stage);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1u;
        }
      }
    };
    // Items: the block's first is blockIdx.x, each later one gridDim.x + the next value of the
    // counter, which thread 0 takes one item ahead (its latency runs behind the item's copies). Items
    // differ in cost (an expert tail's items 80 rows, the items of the block it came from nothing),
    // so a fixed stride would leave the SMs that drew the costly ones running alone at the end.
    std::int64_t item = blockIdx.x;
    for (int local = 0;; ++local) {  // local: items of this block so far: slot buffer local % 2
      const int b = local & 1;
      mbarrier_wait(slots_empty + b, ((local >> 1) & 1) ^ 1u);
      if (item >= items) {
        if (tid == 0) item_row_count[b] = -1;  // the consumers stop here
        mbarrier_arrive(slots_full + b);
        break;
      }
      unsigned long long ahead = 0;
      if (tid == 0) ahead = atomicAdd(p.item_counter, 1ull);
      const MarlinItem it = marlin_item<kRows>(p, item);
      // This thread's rows tid / 8 + kPieceRowStride·i, loaded before item_rows' loads so that both
      // take one latency (the rows past the block only where they are inside the caller's buffer).
      std::int32_t row_ids[Tile::kPiecesPerThread];
#pragma unroll
      for (int i = 0; i < Tile::kPiecesPerThread; ++i) {
        const int r = (tid >> 3) + Tile::kPieceRowStride * i;
        row_ids[i] = r < kRows || it.row0 + r < p.block_capacity * p.block_size ? p.sorted_token_ids[it.row0 + r] : -1;
      }
      const int rows = item_rows<Tile>(p, it, tid);  // rows of the item's chunks: block rows (+ tail rows of the next)
      if (tid == 0) {
        item_row_count[b] = rows;
        item_index[b] = item;
      }
      // This thread's pieces: rows tid / 8 + kPieceRowStride·i, piece q; padding rows are
      // zero-filled, never stored. The threads of piece 0 write each row's slot and routing weight.
      Sources src;
#pragma unroll
      for (int i = 0; i < Tile::kPiecesPerThread; ++i) {
        const int r = (tid >> 3) + Tile::kPieceRowStride * i;
        const std::int64_t sid = r < rows ? std::int64_t{row_ids[i]} : p.num_slots;
        const bool real = sid >= 0 && sid < p.num_slots;
        src.set(i, p.a, real ? (sid / p.top_k) * (p.k / 8) + q : 0, real);
        if (q == 0) {
          item_slots[kMaxRows * b + r] = real ? static_cast<std::int32_t>(sid) : -1;
          if (p.topk_weights != nullptr) item_weights[kMaxRows * b + r] = real && it.computes ? p.topk_weights[sid] : 0.0f;
        }
      }
      mbarrier_arrive(slots_full + b);
      // A non-local expert's rows store zeros, and a tail went with the block before: no chunks.
      if (it.computes && rows > 0) copy_chunks(it, rows, src);
      if (tid == 0) next_item[b] = gridDim.x + static_cast<std::int64_t>(ahead);
      barrier_and<Tile::kProducerThreads>(1, true);  // next_item[b] written (barrier 1: the producer's)
      item = next_item[b];
    }
  } else {
    // A consumer warp: tile column `column` of each item (its groups from group_first on), in the
    // same order of chunks as the producer.
    claim_registers<Tile::kConsumerRegisters>();
    const int ctid = tid - Tile::kProducerThreads;
    const int lane = ctid & 31;
    const int warp = ctid >> 5;
    const int column = (warp >> 2) * Tile::Consumer::kTileColumns + (Tile::kGroups == 4 ? warp & 3 : (warp & 3) >> 1);
    const int group_first = Tile::kGroups == 4 ? 0 : 2 * (warp & 1);
    const int g = lane >> 2;
    const int t = lane & 3;
    const unsigned ring_shared = shared_address(ring);
    // Releases stage s: every MMA of this warp that read it has completed (the caller waited). Every
    // consumer thread arrives, each for its own reads (one arrival per warp after __syncwarp would
    // rely on the warp barrier's ordering, which compute-sanitizer's racecheck does not follow: it
    // reported each refill as a hazard).
    auto release = [&](int s) { mbarrier_arrive(empty + s); };
    int stage = 0;
    unsigned phase = 0;
    // Item `it` of N rows (kRows, or kMaxRows with an expert tail) from slot buffer b: its chunks'
    // MMAs, then its stores. One instance per N: the accumulators are N / 2 per group.
    auto run_item = [&]<int N>(const MarlinItem& it, int b) {
      const int nt = it.n_item * Tile::kTileColumns + column;
      const bool warp_in_n = nt < p.n_tiles;  // a warp past N still joins every wgmma, with zero A
      float acc[Tile::kGroups][N / 2];
#pragma unroll
      for (int gg = 0; gg < Tile::kGroups; ++gg) {
#pragma unroll
        for (int i = 0; i < N / 2; ++i) acc[gg][i] = 0.0f;
      }
      if (it.computes) {
        GroupParams gp;
        set_item_group_params<T, Tile::kGroups>(gp, p, it.expert, nt, warp_in_n, g, group_first);
        std::uint32_t frag[Tile::kGroups][4];  // the A fragments (marlin_wgmma_tile_words)
        // Tile j of the chunk in stage `stage` (K tile kt0 + j), with its group parameters where a
        // group starts; after tile 0's MMAs are issued, the previous chunk's are all complete.
        auto tile = [&](const char* st, unsigned act, int kt0, int j, int previous) {
          if (j % 2 == 0 && warp_in_n && ((kt0 + j) & p.group_tile_mask) == 0) {
            const int slot = j / 2;
            if (!p.channelwise) {
              set_warp_scales<T, Tile::kGroups>(
                  gp,
                  *reinterpret_cast<const uint4*>(st + Tile::kScaleOffset +
                                                  (slot * Tile::kTileColumns + column) * Tile::kScaleColumnBytes + 16 * g),
                  group_first);
            }
            if constexpr (MODE == QuantMode::zero_point) {
              const char* z = st + Tile::kZeroOffset + (slot * Tile::kTileColumns + column) * Tile::kZeroColumnBytes +
                              g * BITS;  // the lane's 8 columns: BITS bytes
              std::uint32_t zw[BITS / 4];
              if constexpr (BITS == 4) {
                zw[0] = *reinterpret_cast<const std::uint32_t*>(z);
              } else {
                const uint2 v = *reinterpret_cast<const uint2*>(z);
                zw[0] = v.x;
                zw[1] = v.y;
              }
              set_warp_zeros<T, BITS, Tile::kGroups>(gp, zw, group_first);
            }
          }
          std::uint32_t w[Tile::kLaneBytes / 4];
          // The lane's words in the tile column's global order: BITS words a lane (BITS / 4 per
          // group, group gg's from word gg·BITS / 4 on); the warp reads its groups from group_first.
          const char* words = st + Tile::kWeightOffset + Tile::kTileBytes * j + Tile::kColumnBytes * column +
                              (Tile::kColumnBytes / 32) * lane + group_first * BITS;
          if constexpr (Tile::kLaneBytes == 8) {
            const uint2 v = *reinterpret_cast<const uint2*>(words);
            w[0] = v.x;
            w[1] = v.y;
          } else {
#pragma unroll
            for (int i = 0; i < Tile::kLaneBytes / 16; ++i) {
              const uint4 v = *reinterpret_cast<const uint4*>(words + 16 * i);
              w[4 * i] = v.x;
              w[4 * i + 1] = v.y;
              w[4 * i + 2] = v.z;
              w[4 * i + 3] = v.w;
            }
          }
          marlin_wgmma_tile_words<T, BITS, kRows, N>(acc, frag, w, gp, act + 32u * static_cast<unsigned>(j));
          if (j == 0 && previous >= 0) release(previous);
        };
        int previous = -1;  // the stage of the chunk before, not yet released
        bool landed = false;  // this chunk's `full` phase was seen complete during the chunk before
        for (int c = 0; c < chunks; ++c) {
          const int kt0 = Tile::kChunkTiles * c;
          if (!landed) mbarrier_wait(full + stage, phase);
          fence_proxy_async_shared();  // the rows came through cp.async (generic proxy); wgmma reads them
          const char* st = ring + Tile::kStageBytes * stage;
          const unsigned act = ring_shared + static_cast<unsigned>(Tile::kStageBytes * stage);
          if (kt0 + Tile::kChunkTiles <= k_tiles) {
            // The next chunk's barrier is asked halfway through this one: a wait at its start then
            // costs nothing where the chunk has landed (a try_wait's answer takes a round trip that
            // the whole warpgroup, moving in lock step, would otherwise spend idle at every chunk).
            const int next = stage + 1 == kStages ? 0 : stage + 1;
            const unsigned next_phase = next == 0 ? phase ^ 1u : phase;
#pragma unroll
            for (int j = 0; j < Tile::kChunkTiles; ++j) {
              tile(st, act, kt0, j, previous);
              if (j == 1) landed = c + 1 < chunks && mbarrier_test(full + next, next_phase);
            }
          } else {  // the item's last chunk, of fewer tiles: no chunk after it to ask about
            for (int j = 0; kt0 + j < k_tiles; ++j) tile(st, act, kt0, j, previous);
          }
          previous = stage;
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1u;
          }
        }
        wgmma_wait<0>();
        if (previous >= 0) release(previous);
      }
      if (warp_in_n) {
        const std::int32_t* const row_slots = item_slots + kMaxRows * b;
        const float* const row_weights = item_weights + kMaxRows * b;
        store_marlin_sums<T, N / 8, Tile::kGroups>(p, N == kRows ? it.rows : N, 64 * nt + 16 * group_first + g, it.computes, t,
                                                    [&](int r) { return std::int64_t{row_slots[r]}; },
                                                    [&](int r, std::int64_t) { return row_weights[r]; },
                                                    [&](int gg, int tt, int j) { return acc[gg][4 * tt + j]; });
      }
    };
    for (int local = 0;; ++local) {  // the producer's items, in its order
      const int b = local & 1;
      mbarrier_wait(slots_full + b, (local >> 1) & 1);  // this item's index, slots and rows
      const int rows = item_row_count[b];
      if (rows < 0) break;
      const MarlinItem it = marlin_item<kRows>(p, item_index[b]);
      if (Tile::kTailRows > 0 && rows > kRows) {
        run_item.template operator()<Tile::kMaxRows>(it, b);
      } else if (rows > 0) {
        run_item.template operator()<kRows>(it, b);
      }
      mbarrier_arrive(slots_empty + b);
    }
  }
#else
  __trap();  // never launched: the host takes this path only where the sm_90a code was built
#endif
}

template <typename T, int BITS, int ROWS>
void launch_marlin_wgmma_producer(const MarlinParams& params, cudaStream_t stream) {
  if (params.item_counter == nullptr) throw std::logic_error("marlin_moe: the producer form needs the item counter");
  check_cuda(cudaMemsetAsync(params.item_counter, 0, sizeof(unsigned long long), stream), "marlin_moe: item counter");
  auto launch = [&](auto kernel) {
    launch_persistent(kernel, WgmmaProducerTile<BITS, ROWS>::kThreads,
                      params.block_capacity * params.row_groups * params.n_items, params, stream, "marlin_moe",
                      marlin_wgmma_producer_smem_bytes<BITS, ROWS>(), params.likely_items, params.max_grid);
  };
  if (params.zeros != nullptr) {
    launch(marlin_wgmma_producer_kernel<T, BITS, ROWS, QuantMode::zero_point>);
  } else {
    launch(marlin_wgmma_producer_kernel<T, BITS, ROWS, QuantMode::symmetric>);
  }
}

}  // namespace moeval::kernels::detail
