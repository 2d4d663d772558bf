// Internal: the two 16-bit activation types behind one interface (conversions with a single
// round-to-nearest-even, exactly rounded packed arithmetic, and the tensor-core mma step).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace moeval::kernels::detail {

template <typename T>
struct Half16;

template <>
struct Half16<__half> {
  using Pair = __half2;
  static constexpr std::uint32_t kBase = 0x6400;  // 1024.0: ulp 1 up to 2047, room for 8-bit codes
  __device__ static float to_float(std::uint16_t bits) { return __half2float(__ushort_as_half(bits)); }
  __device__ static std::uint16_t from_float(float x) { return __half_as_ushort(__float2half_rn(x)); }
  __device__ static std::uint32_t pack(float lo, float hi) {
    const __half2 p = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&p);
  }
  __device__ static std::uint32_t sub_mul(std::uint32_t x, std::uint32_t z, std::uint32_t s) {
    const __half2 r = __hmul2_rn(__hsub2_rn(*reinterpret_cast<const __half2*>(&x), *reinterpret_cast<const __half2*>(&z)),
                                 *reinterpret_cast<const __half2*>(&s));
    return *reinterpret_cast<const std::uint32_t*>(&r);
  }
  __device__ static void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <>
struct Half16<__nv_bfloat16> {
  using Pair = __nv_bfloat162;
  static constexpr std::uint32_t kBase = 0x4300;  // 128.0: ulp 1 up to 255, room for 4-bit codes
  __device__ static float to_float(std::uint16_t bits) { return __bfloat162float(__ushort_as_bfloat16(bits)); }
  __device__ static std::uint16_t from_float(float x) { return __bfloat16_as_ushort(__float2bfloat16_rn(x)); }
  __device__ static std::uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&p);
  }
  __device__ static std::uint32_t sub_mul(std::uint32_t x, std::uint32_t z, std::uint32_t s) {
    const __nv_bfloat162 r =
        __hmul2_rn(__hsub2_rn(*reinterpret_cast<const __nv_bfloat162*>(&x), *reinterpret_cast<const __nv_bfloat162*>(&z)),
                   *reinterpret_cast<const __nv_bfloat162*>(&s));
    return *reinterpret_cast<const std::uint32_t*>(&r);
  }
  __device__ static void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

}  // namespace moeval::kernels::detail
