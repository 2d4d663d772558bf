// marlin_repack: checkpoint layouts → the Marlin MoE layout (marlin_moe.h), on the device, all
// experts of one GEMM in one launch per tensor. Load-time operations: each call synchronises its
// stream before returning (so it can report bad perm entries found on the device).
//
// pf = 32 / bits codes per int32 (8 for 4-bit, 4 for 8-bit). Every tensor is stacked per expert [E, ...].
//
// Weights: Marlin qweight int32 [E, K/16, N·16/pf] — 16×64 tiles laid along N inside each 16-row
// band of K. Inside a tile (4-bit: 128 words), lane l = 4c + t of the 16-column group wg owns word
// 4l + wg, whose nibbles (0, 4, 1, 5, 2, 6, 3, 7) hold rows (2t, 2t+1, 2t+8, 2t+9) of column c, then
// the same rows of column c + 8. 8-bit: 256 words, word 8l + 2wg + h, bytes (0..3) hold rows
// (2t, 2t+8, 2t+1, 2t+9) of column 16wg + 8h + c.
//   GPTQ  qweight int32 [E, K/pf, N], packed along K in plain order: code (k, n) sits in field k % pf
//         of word (k / pf, n). With perm [E, K] (act-order), Marlin row j takes checkpoint row
//         perm[e, j] (a gather over K before tiling); perm = null keeps the order.
//   AWQ   qweight int32 [E, K, N/8], 4-bit only, packed along N with the AWQ interleave: column j
//         of each 8-column group sits in nibble [0,4,1,5,2,6,3,7][j].
// Scales [E, G, N] (16-bit, any dtype: only bits move): the column permutation Marlin reads,
//   grouped (G > 1): in chunks of 64, out[64b + 8i + j] = in[64b + i + 8j];
//   channelwise (G == 1): in chunks of 32, out[32b + 8i + m] = in[32b + 2i + o[m]],
//   o = (0, 1, 8, 9, 16, 17, 24, 25).
//   The permutation is chosen from G, the rows of the scales, never from K: deciding from another size
//   is the wrong-size_k bug class. A K shard (is_k_full = false) passes the layer's global G.
// Zero points: AWQ qzeros int32 [E, G, N/8] (4-bit, AWQ interleave) → Marlin zeros int32 [E, G, N/8]:
//   the grouped permutation (always), then in every 8 consecutive entries out[m] = in[[0,2,4,6,1,3,5,7][m]],
//   packed with entry m in nibble m.
//
// Requirements (std::invalid_argument naming the argument, its value and what is allowed):
//   E >= 1, K % 16 == 0, N % 64 == 0, bits 4 or 8 (AWQ: 4), G >= 1; non-null input and output;
//   input and output must not overlap; every pointer on one device (the launch goes there and the
//   caller's current device is restored); perm entries in [0, K) (checked on the device; the output
//   is then all zero words in the affected tiles and the call throws after the launch).
// CUDA failures are std::runtime_error. Index math is 64-bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace moeval::kernels {

struct GptqToMarlinArgs {
  const std::uint32_t* qweight = nullptr;  // [E, K/pf, N]
  const std::int32_t* perm = nullptr;      // [E, K] or null (no act-order)
  std::uint32_t* out = nullptr;            // [E, K/16, N·16/pf]
  int num_experts = 0;
  std::int64_t size_k = 0;
  std::int64_t size_n = 0;
  int num_bits = 4;
  cudaStream_t stream = nullptr;
};

struct AwqToMarlinArgs {
  const std::uint32_t* qweight = nullptr;  // [E, K, N/8]
  std::uint32_t* out = nullptr;            // [E, K/16, N·2]
  int num_experts = 0;
  std::int64_t size_k = 0;
  std::int64_t size_n = 0;
  int num_bits = 4;  // 4 only (AWQ has no 8-bit format)
  cudaStream_t stream = nullptr;
};

struct MarlinScalesArgs {
  const std::uint16_t* scales = nullptr;  // [E, G, N], 16-bit bits (fp16 or bf16)
  std::uint16_t* out = nullptr;           // [E, G, N], permuted
  int num_experts = 0;
  std::int64_t num_groups = 0;  // G: > 1 selects the grouped permutation, 1 the channelwise one
  std::int64_t size_n = 0;
  cudaStream_t stream = nullptr;
};

struct AwqZerosToMarlinArgs {
  const std::uint32_t* qzeros = nullptr;  // [E, G, N/8]
  std::uint32_t* out = nullptr;           // [E, G, N/8]
  int num_experts = 0;
  std::int64_t num_groups = 0;
  std::int64_t size_n = 0;
  int num_bits = 4;  // 4 only
  cudaStream_t stream = nullptr;
};

enum class MarlinScalePermutation : std::uint8_t { grouped, channelwise };

// The permutation marlin_permute_scales applies for G groups (grouped iff G > 1).
constexpr MarlinScalePermutation marlin_scale_permutation(std::int64_t num_groups) {
  return num_groups > 1 ? MarlinScalePermutation::grouped : MarlinScalePermutation::channelwise;
}

void gptq_to_marlin(const GptqToMarlinArgs& args);
void awq_to_marlin(const AwqToMarlinArgs& args);
void marlin_permute_scales(const MarlinScalesArgs& args);
void awq_zeros_to_marlin(const AwqZerosToMarlinArgs& args);

}  // namespace moeval::kernels
