// Internal: the WNA16 MoE GEMM kernel.
//
// Work item = (moe block, row group, N tile). A thread block of 4 warps owns one item at a time
// (persistent grid; each block takes a contiguous run of items, so one launch serves any E).
// Warp layout: warps_n × warps_k with warps_n·warps_k = 4; a warp computes 16·RT output columns
// (n; RT = wna16_row_tiles: 2 for 4-bit items of ≤ 32 rows, else 1) for all rows of the item
// over its share of K, as mma.m16n8k16 with the WEIGHTS as the 16-row operand and 8 tokens as
// the 8-column operand (so an 8-row decode block wastes nothing). Partial sums of the K split are
// added in shared memory in warp order (deterministic, no atomics).
//
// Data movement: a thread reads 16 contiguous bytes of a weight row per chunk (4 threads cover
// one row's 64-byte chunk, 16·RT rows per warp); chunks are prefetched `kStages` deep with cp.async
// into the lane's own shared-memory slots (scales and zero points in registers alongside).
// Activations come from global memory (L1): for 4-bit 8-row items a whole chunk ahead into
// registers, otherwise one 16-byte word ahead (see holds_chunk_activations).
// The mma's reduction index is a permutation of real k chosen so one mask extracts two codes:
// the thread's logical pair (2t, 2t+1) is real (k_p, k_{p+4}) of a 32-bit word (4-bit) or
// (k_p, k_{p+2}) (8-bit); activations are permuted the same way with byte_perm.
#pragma once

#include <stdexcept>
#include <string>

#include "moeval/kernels/device_info.h"
#include "../common/async_copy.cuh"
#include "../common/dequant16.cuh"
#include "../common/persistent_launch.cuh"
#include "wna16_params.h"

namespace moeval::kernels::detail {

constexpr int kWna16Threads = 128;

template <int BITS>
struct ChunkGeometry {
  static constexpr int kThreadK = 128 / BITS;  // k in a thread's 16 bytes: 32 (4-bit), 16 (8-bit)
  static constexpr int kChunkK = 4 * kThreadK;  // k per row per chunk (4 threads)
};

// Per-chunk quantization parameters, prefetched in registers next to the chunk's weights (which
// travel through the lane's private shared-memory slots, see load_stage). Kept packed as the
// dequantization uses them (both 16-bit halves), so the K loop does no repacking, and as whole
// 32-bit registers (16- and 8-bit fields cost a merge instruction on every write).
// Row r of the warp's 16·RT rows is n0 + g + 8·r (row tile r / 2).
template <int RT>
struct WeightStage {
  std::uint32_t scale2[2 * RT];  // s in both halves (0 for a slice past K or a row past N: W16 = 0 exactly)
  std::uint32_t zero2[2 * RT];   // (base | z) in both halves, see make_params
};

// Read instead of activations by lanes whose slice of a chunk lies past K (the K tail), so the
// activation loads need no predicate, no zeroing and no per-load address arithmetic: 0 × W16 = 0
// keeps the sum exact (W16 is 0 there too, see load_stage). Never written; zero-initialized.
static __device__ uint4 kZeroChunk[4];

// Where the lane's weight rows (g + 8·r of the warp's 16·RT) live for the current expert, with this
// lane's 16-byte column offset folded in; set once per work item so the chunk loop only adds.
// Rows r ≥ valid_rows (past N) point at row g instead: never loaded (see load_stage).
template <int RT>
struct RowPointers {
  const std::uint8_t* weight[2 * RT];   // at byte 16·t of the row
  const std::uint16_t* scale[2 * RT];   // row start
  const std::uint8_t* zero[2 * RT];     // row start in qzeros, or null (implicit zero)
  std::uint32_t zero_shift[2 * RT];     // 4-bit: 4·(n & 1)
};

template <int BITS, int RT>
__device__ inline RowPointers<RT> row_pointers(const Wna16Params& p, int expert, std::int64_t n_row0, int t,
                                               int valid_rows) {
  RowPointers<RT> r;
#pragma unroll
  for (int i = 0; i < 2 * RT; ++i) {
    const std::int64_t n = n_row0 + (i < valid_rows ? 8 * i : 0);
    const std::int64_t row = static_cast<std::int64_t>(expert) * p.n + n;
    r.weight[i] = p.qweight + row * p.row_bytes + 16 * t;
    r.scale[i] = p.scales + row * p.groups;
    r.zero_shift[i] = 0;
    if (p.qzeros == nullptr) {
      r.zero[i] = nullptr;
    } else if constexpr (BITS == 4) {
      r.zero[i] = p.qzeros + (static_cast<std::int64_t>(expert) * (p.n / 2) + n / 2) * p.groups;
      r.zero_shift[i] = 4 * static_cast<std::uint32_t>(n & 1);
    } else {
      r.zero[i] = p.qzeros + row * p.groups;
    }
  }
  return r;
}

// Weights are read once: copied asynchronously into this lane's own shared-memory slot (no
// registers held while in flight, so more chunks can be in flight at the same occupancy), skipping
// L1, with L2 asked to fetch 256 bytes around each 64-byte row piece so the next chunks of the row
// come from L2 (better DRAM locality than 64-byte requests). Each lane reads back only what it
// wrote, so cp.async.wait_group alone orders the two (no barrier).
//
// Starts chunk `chunk` of the warp's rows: weights into `slot` (slot[32·r]: this lane's 16 bytes of
// row r), scales and zeros into st. The caller commits the async group. A slot that is not loaded
// (slice past K, row past N: valid_rows is warp-uniform) keeps stale codes, but a zero scale makes
// every W16 of it exactly 0.
template <typename T, int BITS, int RT>
__device__ inline void load_stage(WeightStage<RT>& st, uint4* slot, const Wna16Params& p, int k,
                                  const RowPointers<RT>& rows, int chunk, int t, int valid_rows) {
  using G = ChunkGeometry<BITS>;
  const int k0 = chunk * G::kChunkK + t * G::kThreadK;
  if (k0 >= k) {
#pragma unroll
    for (int r = 0; r < 2 * RT; ++r) {
      st.scale2[r] = 0;
      st.zero2[r] = Half16<T>::kBase * 0x00010001u;
    }
    return;
  }
  const int group = k0 >> p.group_shift;
#pragma unroll
  for (int r = 0; r < 2 * RT; ++r) {
    st.scale2[r] = 0;
    if (r < valid_rows) {
      copy_async_16(slot + 32 * r, rows.weight[r] + static_cast<std::int64_t>(chunk) * 64);
      st.scale2[r] = static_cast<std::uint32_t>(__ldg(rows.scale[r] + group)) * 0x00010001u;
    }
  }
  // Branch on the kernel parameter (uniform across the grid) rather than on the per-lane row
  // pointers, so the common implicit-zero case costs no loads and no predicates.
  if (p.qzeros == nullptr) {
#pragma unroll
    for (int r = 0; r < 2 * RT; ++r) st.zero2[r] = (Half16<T>::kBase | p.implicit_zero) * 0x00010001u;
  } else {
#pragma unroll
    for (int r = 0; r < 2 * RT; ++r) {
      const std::uint32_t z = (__ldg(rows.zero[r] + group) >> rows.zero_shift[r]) & (BITS == 4 ? 0xFu : 0xFFu);
      st.zero2[r] = (Half16<T>::kBase | z) * 0x00010001u;
    }
  }
}

// Asks L1 for this lane's activations of a later chunk, so compute_stage finds them there
// instead of waiting on L2 (the activation rows change with every moe block). Every x_rows[tt] is
// a valid row (padding rows point at row 0 of A).
template <int BITS, int TT>
__device__ inline void prefetch_activations(const std::uint16_t* const (&x_rows)[TT], int k, int chunk, int t) {
  using G = ChunkGeometry<BITS>;
  const int k0 = chunk * G::kChunkK + t * G::kThreadK;
  if (k0 >= k) return;
#pragma unroll
  for (int tt = 0; tt < TT; ++tt) {
    asm volatile("prefetch.global.L1 [%0];\n" : : "l"(x_rows[tt] + k0));
  }
}

// 4-bit items of 8 rows hold the activations of a whole chunk in registers (16 per thread), loaded
// while the chunk before computes. Why: requested one word ahead, as larger items do, they were
// the long-scoreboard stall of the K loop (ncu, DeepSeek-V3 w13 M = 64: waiting on L1TEX data was
// 43 % of the cycles between issues); a chunk ahead hides even an L2 round trip. (Staging them in
// shared memory, shared by the 4 warps, was measured too: 1.7–4.7× slower, the per-chunk barrier
// couples the warps' weight streams.)
template <int BITS, int TT>
constexpr bool holds_chunk_activations() { return BITS == 4 && TT == 1; }

template <int TT>
struct ChunkActivations {
  uint4 word[TT][4];  // 8 consecutive k per word, as loaded
};

// Lanes past K read the zero chunk: one select per token tile instead of a predicate per load.
template <int BITS, int TT>
__device__ inline void load_chunk_activations(ChunkActivations<TT>& x, const std::uint16_t* const (&x_rows)[TT], int k,
                                              int chunk, int t) {
  using G = ChunkGeometry<BITS>;
  const int k0 = chunk * G::kChunkK + t * G::kThreadK;
#pragma unroll
  for (int tt = 0; tt < TT; ++tt) {
    const uint4* src = k0 < k ? reinterpret_cast<const uint4*>(x_rows[tt] + k0) : kZeroChunk;
#pragma unroll
    for (int i = 0; i < 4; ++i) x.word[tt][i] = __ldg(src + i);
  }
}

// Adds one chunk's products into acc. x_rows[tt] is the activation row of this lane's token in
// tile tt (padding rows point at row 0 of A: the mma's columns are independent and a padding
// column is never stored). Word i accumulates into chain i % C: with few token tiles,
// independent chains keep consecutive mma from waiting on each other's accumulators.
// HELD (see holds_chunk_activations): `held` carries this chunk's activations in and, when
// load_next, the next chunk's out; otherwise `held` is unused and they are loaded here.
// Row tile m (rows 2m, 2m + 1 of the stage) multiplies the same activation fragments: RT > 1
// spreads each activation load over more weights.
template <typename T, int BITS, int TT, int C, bool HELD, int RT>
__device__ inline void compute_stage(float (&acc)[C][RT][TT][4], const WeightStage<RT>& st, const uint4* slot,
                                     const std::uint16_t* const (&x_rows)[TT], int k, int chunk, int t,
                                     ChunkActivations<TT>& held, bool load_next) {
  using G = ChunkGeometry<BITS>;
  ChunkActivations<TT> current;
  if constexpr (HELD) {
    current = held;
    if (load_next) load_chunk_activations<BITS, TT>(held, x_rows, k, chunk + 1, t);
  }
  const int k0 = chunk * G::kChunkK + t * G::kThreadK;
  // Lanes past K read the zero chunk: one select per token tile instead of a predicate per load.
  const uint4* x_src[TT];
#pragma unroll
  for (int tt = 0; tt < TT; ++tt) x_src[tt] = k0 < k ? reinterpret_cast<const uint4*>(x_rows[tt] + k0) : kZeroChunk;
  RowGroupParams q[2 * RT];
  std::uint32_t w[2 * RT][4];
#pragma unroll
  for (int r = 0; r < 2 * RT; ++r) {
    q[r] = make_params<T>(st.scale2[r], st.zero2[r]);
    const uint4 row = slot[32 * r];
    w[r][0] = row.x;
    w[r][1] = row.y;
    w[r][2] = row.z;
    w[r][3] = row.w;
  }
  // 4-bit, not HELD: the activations of word i + 1 are requested while word i is dequantized, so
  // their (L1) latency is hidden behind independent work instead of stalling the next byte_perm.
  uint4 x_next[TT];
  if constexpr (BITS == 4 && !HELD) {
#pragma unroll
    for (int tt = 0; tt < TT; ++tt) x_next[tt] = __ldg(x_src[tt]);
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (BITS == 4) {
      std::uint32_t xp[TT][4];
#pragma unroll
      for (int tt = 0; tt < TT; ++tt) {
        uint4 x;
        if constexpr (HELD) {
          x = current.word[tt][i];
        } else {
          x = x_next[tt];
          if (i < 3) x_next[tt] = __ldg(x_src[tt] + i + 1);
        }
        xp[tt][0] = __byte_perm(x.x, x.z, 0x5410);
        xp[tt][1] = __byte_perm(x.x, x.z, 0x7632);
        xp[tt][2] = __byte_perm(x.y, x.w, 0x5410);
        xp[tt][3] = __byte_perm(x.y, x.w, 0x7632);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int m = 0; m < RT; ++m) {
          const int r0 = 2 * m;
          const int r1 = 2 * m + 1;
          const std::uint32_t a[4] = {
              dequant4_pair<T>(w[r0][i], 2 * h, q[r0]), dequant4_pair<T>(w[r1][i], 2 * h, q[r1]),
              dequant4_pair<T>(w[r0][i], 2 * h + 1, q[r0]), dequant4_pair<T>(w[r1][i], 2 * h + 1, q[r1])};
#pragma unroll
          for (int tt = 0; tt < TT; ++tt) Half16<T>::mma(acc[i % C][m][tt], a, xp[tt][2 * h], xp[tt][2 * h + 1]);
        }
      }
    } else {
      uint2 x[TT];
#pragma unroll
      for (int tt = 0; tt < TT; ++tt) x[tt] = __ldg(reinterpret_cast<const uint2*>(x_src[tt]) + i);
#pragma unroll
      for (int m = 0; m < RT; ++m) {
        const int r0 = 2 * m;
        const int r1 = 2 * m + 1;
        const std::uint32_t a[4] = {dequant8_pair<T>(w[r0][i], 0, q[r0]), dequant8_pair<T>(w[r1][i], 0, q[r1]),
                                    dequant8_pair<T>(w[r0][i], 1, q[r0]), dequant8_pair<T>(w[r1][i], 1, q[r1])};
#pragma unroll
        for (int tt = 0; tt < TT; ++tt) {
          Half16<T>::mma(acc[i % C][m][tt], a, __byte_perm(x[tt].x, x[tt].y, 0x5410),
                         __byte_perm(x[tt].x, x[tt].y, 0x7632));
        }
      }
    }
  }
}

// Blocks per SM (the register budget): 8- and 16-row items with two row tiles run 3 (8 rows: the
// two tiles, the held chunk of activations and 4 stages of quantization parameters need 160
// registers; at 128 they spill; 16 rows: twice the accumulators instead of the held chunk, 168),
// other 16-row items 4, larger items 2 (32 rows with two row tiles: 224 registers).
template <int BITS, int TT>
constexpr int wna16_blocks_per_sm() {
  return wna16_row_tiles(BITS, TT) == 2 && TT <= 2 ? 3 : TT == 2 ? 4 : 2;
}

template <typename T, int BITS, int TT>
__global__ void __launch_bounds__(kWna16Threads, wna16_blocks_per_sm<BITS, TT>()) wna16_moe_kernel(const Wna16Params p) {
  using G = ChunkGeometry<BITS>;
  constexpr int kStages = TT <= 2 ? 4 : 3;  // chunks in flight per warp (shared memory slots; scales in registers)
  constexpr int kRows = 8 * TT;
  constexpr int RT = wna16_row_tiles(BITS, TT);  // 16-row weight tiles per warp
  constexpr int kChains = RT == 1 && TT <= 2 ? 2 : 1;  // accumulator chains per token tile (see compute_stage)
  constexpr bool kHeld = holds_chunk_activations<BITS, TT>();
  __shared__ float partial[4][RT][TT][4][32];
  __shared__ uint4 ring[4][kStages][2 * RT][32];  // per warp, per stage: 2·RT weight rows × 32 lanes

  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int g = lane >> 2;
  const int t = lane & 3;
  const int warps_n = 4 / p.warps_k;
  const int wn = warp % warps_n;
  const int wk = warp / warps_n;

  const std::int64_t blocks = min(static_cast<std::int64_t>(*p.num_tokens_post_padded / p.block_size), p.block_capacity);
  const std::int64_t items = blocks * p.row_groups * p.n_tiles;
  const int k = static_cast<int>(p.k);  // < 2^30 (checked on the host): 32-bit compares in the K loop
  const int chunks = (k + G::kChunkK - 1) / G::kChunkK;
  const int chunk_begin = chunks * wk / p.warps_k;
  const int chunk_end = chunks * (wk + 1) / p.warps_k;

  // Each thread block takes a contiguous run of items: neighbouring N tiles of one moe block, so
  // the block's activation rows stay in L1 from one item to the next.
  const std::int64_t per_cta = (items + gridDim.x - 1) / gridDim.x;
  const std::int64_t item_end = min(items, (static_cast<std::int64_t>(blockIdx.x) + 1) * per_cta);
  for (std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * per_cta; item < item_end; ++item) {
    const int n_tile = static_cast<int>(item % p.n_tiles);
    const std::int64_t rest = item / p.n_tiles;
    const int row_group = static_cast<int>(rest % p.row_groups);
    const std::int64_t block = rest / p.row_groups;
    const int expert = p.expert_ids[block];
    const bool computes = expert >= 0 && expert < p.num_experts;
    const std::int64_t row0 = block * p.block_size + static_cast<std::int64_t>(row_group) * kRows;
    const int rows = min(kRows, p.block_size - row_group * kRows);
    const std::int64_t n0 = (static_cast<std::int64_t>(n_tile) * warps_n + wn) * 16 * RT;
    // Row tiles of this warp inside N (N % 16 == 0, so a tile is all in or all out); warp-uniform.
    const std::int64_t tiles_left = (p.n - n0) / 16;
    const int valid_tiles = tiles_left <= 0 ? 0 : tiles_left >= RT ? RT : static_cast<int>(tiles_left);
    const bool warp_in_n = valid_tiles > 0;

    float chains[kChains][RT][TT][4];
#pragma unroll
    for (int ch = 0; ch < kChains; ++ch) {
#pragma unroll
      for (int m = 0; m < RT; ++m) {
#pragma unroll
        for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
          for (int j = 0; j < 4; ++j) chains[ch][m][tt][j] = 0.0f;
        }
      }
    }

    if (computes && warp_in_n) {
      const std::uint16_t* x_rows[TT];
#pragma unroll
      for (int tt = 0; tt < TT; ++tt) {
        const int r = tt * 8 + g;
        const std::int64_t sid = r < rows ? p.sorted_token_ids[row0 + r] : p.num_slots;
        x_rows[tt] = (sid >= 0 && sid < p.num_slots) ? p.a + (sid / p.top_k) * p.k : p.a;
      }
      const int valid_rows = RT == 1 ? 2 : 2 * valid_tiles;
      const RowPointers<RT> row_ptrs = row_pointers<BITS, RT>(p, expert, n0 + g, t, valid_rows);
      WeightStage<RT> stage[kStages];
      constexpr int kSlotStride = 64 * RT;  // uint4 per stage of one warp
      uint4* slots = &ring[warp][0][0][lane];  // stage s: slots + kSlotStride·s
      ChunkActivations<TT> held;
      if constexpr (kHeld) load_chunk_activations<BITS, TT>(held, x_rows, k, chunk_begin, t);
      // One async group per chunk, empty ones included, so "all but the newest kStages − 1 groups
      // are complete" always means "the chunk about to be computed has landed".
#pragma unroll
      for (int s = 0; s < kStages; ++s) {
        if (chunk_begin + s < chunk_end) {
          load_stage<T, BITS, RT>(stage[s], slots + kSlotStride * s, p, k, row_ptrs, chunk_begin + s, t, valid_rows);
        }
        commit_async();
      }
      for (int c = chunk_begin; c < chunk_end; c += kStages) {
#pragma unroll
        for (int s = 0; s < kStages; ++s) {
          if (c + s < chunk_end) {
            wait_async<kStages - 1>();
            compute_stage<T, BITS, TT, kChains, kHeld, RT>(chains, stage[s], slots + kSlotStride * s, x_rows, k,
                                                           c + s, t, held, c + s + 1 < chunk_end);
            if (c + s + kStages < chunk_end) {
              load_stage<T, BITS, RT>(stage[s], slots + kSlotStride * s, p, k, row_ptrs, c + s + kStages, t,
                                      valid_rows);
              if constexpr (!kHeld) prefetch_activations<BITS, TT>(x_rows, k, c + s + kStages, t);
            }
            commit_async();
          }
        }
      }
    }

    float acc[RT][TT][4];  // the chains summed in a fixed order
#pragma unroll
    for (int m = 0; m < RT; ++m) {
#pragma unroll
      for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          acc[m][tt][j] = chains[0][m][tt][j];
#pragma unroll
          for (int ch = 1; ch < kChains; ++ch) acc[m][tt][j] += chains[ch][m][tt][j];
        }
      }
    }

    if (p.warps_k > 1) {
#pragma unroll
      for (int m = 0; m < RT; ++m) {
#pragma unroll
        for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
          for (int j = 0; j < 4; ++j) partial[warp][m][tt][j][lane] = acc[m][tt][j];
        }
      }
      __syncthreads();
      if (wk == 0) {
#pragma unroll
        for (int m = 0; m < RT; ++m) {
#pragma unroll
          for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              float sum = partial[wn][m][tt][j][lane];
              for (int w = 1; w < p.warps_k; ++w) sum += partial[wn + w * warps_n][m][tt][j][lane];
              acc[m][tt][j] = sum;
            }
          }
        }
      }
    }

    if (wk == 0 && warp_in_n) {
#pragma unroll
      for (int m = 0; m < RT; ++m) {
        if (m >= valid_tiles) continue;
#pragma unroll
        for (int tt = 0; tt < TT; ++tt) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int r = tt * 8 + 2 * t + (j & 1);
            if (r >= rows) continue;
            const std::int64_t sid = p.sorted_token_ids[row0 + r];
            if (sid < 0 || sid >= p.num_slots) continue;
            float v = 0.0f;  // rows of a non-local (-1) expert are zeros
            if (computes) v = p.topk_weights != nullptr ? acc[m][tt][j] * p.topk_weights[sid] : acc[m][tt][j];
            p.c[sid * p.n + n0 + 16 * m + g + 8 * (j >> 1)] = Half16<T>::from_float(v);
          }
        }
      }
    }
    if (p.warps_k > 1) __syncthreads();  // partial[] is reused by the next item
  }
}

template <typename T, int BITS, int TT>
void launch_wna16_tiles(const Wna16Params& params, cudaStream_t stream) {
  launch_persistent(wna16_moe_kernel<T, BITS, TT>, kWna16Threads,
                    params.block_capacity * params.row_groups * params.n_tiles, params, stream, "wna16_moe");
}

template <typename T, int BITS>
void launch_wna16(const Wna16Params& params, int token_tiles, cudaStream_t stream) {
  switch (token_tiles) {
    case 1: return launch_wna16_tiles<T, BITS, 1>(params, stream);
    case 2: return launch_wna16_tiles<T, BITS, 2>(params, stream);
    case 4: return launch_wna16_tiles<T, BITS, 4>(params, stream);
    case 6: return launch_wna16_tiles<T, BITS, 6>(params, stream);
    case 8: return launch_wna16_tiles<T, BITS, 8>(params, stream);
    default: throw std::logic_error("wna16_moe: no kernel for token_tiles = " + std::to_string(token_tiles));
  }
}

}  // namespace moeval::kernels::detail
