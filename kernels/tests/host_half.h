// Test helper: host-side 16-bit conversions (round-to-nearest-even), as the kernels' epilogue does.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

#include "moeval/kernels/act_dtype.h"

namespace moeval::kernels::test {

inline std::uint16_t to_bits(float x, ActDType t) {
  if (t == ActDType::f16) {
    return __half_raw(__float2half_rn(x)).x;
  }
  return __nv_bfloat16_raw(__float2bfloat16_rn(x)).x;
}

inline float from_bits(std::uint16_t b, ActDType t) {
  if (t == ActDType::f16) {
    __half_raw raw;
    raw.x = b;
    return __half2float(__half(raw));
  }
  const std::uint32_t w = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

inline double unit_roundoff(ActDType t) { return t == ActDType::f16 ? 1.0 / 2048 : 1.0 / 256; }

}  // namespace moeval::kernels::test
