// Index maps of the Marlin repack (marlin_repack.h), one output word at a time. Host and device
// share them: the kernels in marlin_repack.cu call them per thread, and a cpu-tier test computes
// every output word with them on the host and compares with the fixtures' packers, so the layout
// logic is proven without a device (the device tests then prove the launch around it).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace moeval::kernels::repack {

constexpr std::int64_t kTileK = 16;  // rows of K per Marlin tile
constexpr std::int64_t kTileN = 64;  // columns of N per Marlin tile

// Words of one 16×64 tile: 128 for 4-bit, 256 for 8-bit.
__host__ __device__ constexpr std::int64_t tile_words(int bits) { return kTileK * kTileN * bits / 32; }

// (row, column) inside a 16×64 tile of field f of tile word w.
struct TileCell {
  int row;
  int col;
};

__host__ __device__ inline TileCell tile_cell(int bits, int w, int f) {
  if (bits == 4) {
    // word = 4·lane + wg (lane = 4c + t); nibble f holds value i = [0,2,4,6,1,3,5,7][f] of the lane's
    // list: rows (2t, 2t+1, 2t+8, 2t+9) of column c, then the same rows of column c + 8.
    const int lane = w >> 2, wg = w & 3, t = lane & 3, c = lane >> 2;
    const int i = (f & 4) ? 2 * (f & 3) + 1 : 2 * f;
    const int h = i >> 2, r = i & 3;
    const int row_offset = (r & 1) + ((r >> 1) << 3);  // 0, 1, 8, 9
    return {2 * t + row_offset, 16 * wg + 8 * h + c};
  }
  // 8-bit: word = 8·lane + 2·wg + h; byte f holds row offset (0, 8, 1, 9)[f] of column 16wg + 8h + c.
  const int lane = w >> 3, wg = (w >> 1) & 3, h = w & 1, t = lane & 3, c = lane >> 2;
  const int row_offset = ((f & 1) << 3) + (f >> 1);
  return {2 * t + row_offset, 16 * wg + 8 * h + c};
}

// Word `o` (inside one expert's [K/16, N·16/pf] tiles) from the codes code(k, n) of that expert,
// k in Marlin row order: field f of the word holds the code of its tile cell.
template <class Code>
__host__ __device__ inline std::uint32_t marlin_tile_word(std::int64_t o, std::int64_t n, int bits, Code code) {
  const std::int64_t words = tile_words(bits);
  const std::int64_t tile = o / words, n_tiles = n / kTileN;
  const int w = int(o % words);
  const std::int64_t k0 = (tile / n_tiles) * kTileK, n0 = (tile % n_tiles) * kTileN;
  std::uint32_t word = 0u;
  for (int f = 0; f < 32 / bits; ++f) {
    const TileCell cell = tile_cell(bits, w, f);
    word |= std::uint32_t(code(k0 + cell.row, n0 + cell.col)) << (bits * f);
  }
  return word;
}

// GPTQ: code (k, n) of one expert's qweight [K/pf, N] sits in field k % pf of word (k / pf, n).
__host__ __device__ inline unsigned gptq_code(const std::uint32_t* qweight, std::int64_t k, std::int64_t nn,
                                              std::int64_t n, int bits) {
  const int pf = 32 / bits;
  const std::uint32_t word = qweight[(k / pf) * n + nn];
  return (word >> (bits * int(k % pf))) & ((1u << bits) - 1u);
}

// Nibble in which AWQ stores column j of an 8-column group: [0,4,1,5,2,6,3,7][j].
__host__ __device__ constexpr int awq_nibble_of_column(int j) { return (j >> 1) + 4 * (j & 1); }

// AWQ: code (k, n) of one expert's qweight [K, N/8] (4-bit, AWQ interleave along N).
__host__ __device__ inline unsigned awq_code(const std::uint32_t* qweight, std::int64_t k, std::int64_t nn,
                                             std::int64_t n) {
  const std::uint32_t word = qweight[k * (n / 8) + nn / 8];
  return (word >> (4 * awq_nibble_of_column(int(nn % 8)))) & 0xFu;
}

// Source column of output column x of a permuted scale row: grouped (chunks of 64, an 8×8
// transpose) or channelwise (chunks of 32, o = (0, 1, 8, 9, 16, 17, 24, 25)).
__host__ __device__ inline std::int64_t permuted_source(std::int64_t x, bool grouped) {
  if (grouped) {
    const std::int64_t base = x & ~std::int64_t(63), i = (x & 63) >> 3, j = x & 7;
    return base + i + 8 * j;
  }
  const std::int64_t base = x & ~std::int64_t(31), i = (x & 31) >> 3, m = x & 7;
  return base + 2 * i + (m >> 1) * 8 + (m & 1);
}

// Marlin zero points: entry m of a packed word is permuted column [0,2,4,6,1,3,5,7][m] of its 8.
__host__ __device__ constexpr int marlin_zero_entry(int m) { return ((m & 3) << 1) | (m >> 2); }

// Word w of one Marlin zero-point row from the AWQ qzeros row [N/8] of the same group: the grouped
// permutation, the interleave, then 8 entries per word (4-bit).
__host__ __device__ inline std::uint32_t marlin_zero_word(const std::uint32_t* awq_row, std::int64_t w) {
  std::uint32_t word = 0u;
  for (int m = 0; m < 8; ++m) {
    const std::int64_t n = permuted_source(w * 8 + marlin_zero_entry(m), true);  // zero points: always grouped
    const std::uint32_t src = awq_row[n / 8];
    word |= ((src >> (4 * awq_nibble_of_column(int(n % 8)))) & 0xFu) << (4 * m);
  }
  return word;
}

}  // namespace moeval::kernels::repack
