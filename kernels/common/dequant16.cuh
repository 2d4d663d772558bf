// Internal: dequantization of 4- and 8-bit codes to the 16-bit weights the GEMMs multiply.
//
// Dequantization recipe: W16 = round16((u - z)·s), one rounding. With packed 16-bit math this is
// exact as written: 1024 + u (fp16) or 128 + u (bf16, 4-bit) is built by OR-ing the code into the
// mantissa of the base, subtracting base + z gives the exact integer u - z, and one packed
// multiply by s rounds the exact product once. bf16 8-bit codes (128 + 255 is not a bf16) go
// through fp32, where u - z and (u - z)·s are exact, then one conversion.
#pragma once

#include <cstdint>
#include <type_traits>

#include "half16.cuh"

namespace moeval::kernels::detail {

// Quantization parameters of one (row, group), prepared for packed use.
struct RowGroupParams {
  std::uint32_t zero2;   // (base + z) in both halves (packed path)
  std::uint32_t scale2;  // s in both halves (packed path)
  float zero_f;          // 2^23 + z (fp32 path)
  float scale_f;         // s (fp32 path)
};

// From the packed forms the K loop keeps: scale2 = s in both halves, zero2 = (base | z) in both
// halves (z ≤ 255 lands in the low byte: both bases have a zero low byte).
template <typename T>
__device__ inline RowGroupParams make_params(std::uint32_t scale2, std::uint32_t zero2) {
  RowGroupParams p;
  p.zero2 = zero2;
  p.scale2 = scale2;
  p.zero_f = 8388608.0f + static_cast<float>(zero2 & 0xFFu);
  p.scale_f = Half16<T>::to_float(static_cast<std::uint16_t>(scale2 & 0xFFFFu));
  return p;
}

// 4-bit: pair p (0..3) of a 32-bit word = nibbles (p, p + 4) as a packed 16-bit pair, low half =
// nibble p: one mask extracts both codes at once. (WNA16 words hold k0..k7 in nibbles 0..7, so a
// pair is (k_p, k_{p+4}); Marlin tiles place the two halves of an mma fragment register there.)
// (a & b) | c in one LOP3: written out because the compiler splits the mask and the OR of two
// immediates into two instructions, one per code pair of the hot loop.
__device__ inline std::uint32_t and_or(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

template <typename T>
__device__ inline std::uint32_t dequant4_pair(std::uint32_t word, int p, const RowGroupParams& q) {
  const std::uint32_t x = and_or(word >> (4 * p), 0x000F000Fu, Half16<T>::kBase * 0x00010001u);
  return Half16<T>::sub_mul(x, q.zero2, q.scale2);
}

// 8-bit: pair p (0..1) = bytes (p, p + 2).
template <typename T>
__device__ inline std::uint32_t dequant8_pair(std::uint32_t word, int p, const RowGroupParams& q) {
  if constexpr (std::is_same_v<T, __half>) {
    const std::uint32_t x = and_or(word >> (8 * p), 0x00FF00FFu, 0x64006400u);
    return Half16<T>::sub_mul(x, q.zero2, q.scale2);
  } else {
    const float lo = (__uint_as_float(0x4B000000u | ((word >> (8 * p)) & 0xFFu)) - q.zero_f) * q.scale_f;
    const float hi = (__uint_as_float(0x4B000000u | ((word >> (8 * p + 16)) & 0xFFu)) - q.zero_f) * q.scale_f;
    return Half16<T>::pack(lo, hi);
  }
}

}  // namespace moeval::kernels::detail
