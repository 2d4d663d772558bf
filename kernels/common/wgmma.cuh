// Internal: Hopper's warpgroup-level asynchronous MMA (wgmma, sm_90a only) — the fences, commit and
// wait of its pipeline, the shared-memory matrix descriptor, and the m64nNk16 shapes the Marlin GEMM
// issues (N = 16, 32, 64, 80, 128 token rows), with A from registers and B from shared memory.
//
// Operand layouts (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): with A in
// registers, warp w of the warpgroup holds A rows 16w .. 16w + 15 in the fragment layout of
// mma.m16n8k16's A; D comes back per warp in the mma.m16n8 C layout, one 4-register block per 8
// columns of N: d[4i .. 4i + 3] = (row g, columns 8i + 2t, + 1), (row g + 8, same columns).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace moeval::kernels::detail {

// Before a wgmma whose register operands (A fragments, accumulators) were written by other instructions.
__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" : : : "memory"); }
// Closes the group of wgmma issued since the last commit.
__device__ inline void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" : : : "memory"); }
// Waits until at most PENDING committed groups of this warp are still running.
template <int PENDING>
__device__ inline void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" : : "n"(PENDING) : "memory");
}
// Orders this thread's completed generic-proxy writes to shared memory (st.shared, cp.async) before
// the async proxy's reads (wgmma operands) that follow the next barrier.
__device__ inline void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" : : : "memory"); }

// Descriptor of a K-major operand tile of 16 k (32 bytes of each 128-byte row) with the 128-byte
// swizzle (16-byte piece q of row r stored at piece q ^ (r % 8)): start address (bits 0–13, in
// 16-byte units; the hardware swizzles the absolute address, so the rows' 1024-byte groups must be
// 1024-byte aligned and k offsets inside a row are plain byte offsets), leading byte offset unused
// with this swizzle (1), stride byte offset = 1024 between groups of 8 rows (bits 32–45), layout
// type 1 = 128-byte swizzle (bits 62–63).
__device__ inline std::uint64_t wgmma_sw128_descriptor(unsigned start_address) {
  return static_cast<std::uint64_t>((start_address >> 4) & 0x3FFFu) | (std::uint64_t{1} << 16) |
         (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t{1} << 62);
}

// D[64 × N] += A[64 × 16] · B[16 × N]: fp32 accumulators, f16 or bf16 operands, A from registers,
// B K-major in shared memory. The PTX differs between the two types only in the type names, so
// each shape's statement is written once, with the type as a string literal.
#define MOEVAL_WGMMA_D0_7 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define MOEVAL_WGMMA_D8_15 \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define MOEVAL_WGMMA_D0_31 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define MOEVAL_WGMMA_D32_63 \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define MOEVAL_WGMMA_D32_39 \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define MOEVAL_WGMMA_REGS_8 "%0,%1,%2,%3,%4,%5,%6,%7"
#define MOEVAL_WGMMA_REGS_16 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15"
#define MOEVAL_WGMMA_REGS_32 \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define MOEVAL_WGMMA_REGS_40 \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
  "%32,%33,%34,%35,%36,%37,%38,%39"
#define MOEVAL_WGMMA_REGS_64 \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
  "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
  "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
// SHAPE, TYPE: string literals; DREGS: the accumulators' operand numbers; A, B: the operand numbers
// of A's four registers and of B's descriptor, which follow the accumulators.
#define MOEVAL_WGMMA_RS(SHAPE, TYPE, DREGS, A, B, ...)                                                    \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE \
               " {" DREGS "}, {" A "}, " B ", p, 1, 1, 0;\n}\n"                                               \
               : __VA_ARGS__                                                                                   \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc)                                      \
               : "memory")

// Items of 16 and 32 rows (block_size 16 and 32).
template <typename T>
__device__ inline void wgmma_m64n16k16(float (&d)[8], const std::uint32_t (&a)[4], std::uint64_t b_desc) {
  if constexpr (std::is_same_v<T, __half>) {
    MOEVAL_WGMMA_RS("m64n16k16", "f16", MOEVAL_WGMMA_REGS_8, "%8,%9,%10,%11", "%12", MOEVAL_WGMMA_D0_7);
  } else {
    MOEVAL_WGMMA_RS("m64n16k16", "bf16", MOEVAL_WGMMA_REGS_8, "%8,%9,%10,%11", "%12", MOEVAL_WGMMA_D0_7);
  }
}

template <typename T>
__device__ inline void wgmma_m64n32k16(float (&d)[16], const std::uint32_t (&a)[4], std::uint64_t b_desc) {
  if constexpr (std::is_same_v<T, __half>) {
    MOEVAL_WGMMA_RS("m64n32k16", "f16", MOEVAL_WGMMA_REGS_16, "%16,%17,%18,%19", "%20", MOEVAL_WGMMA_D0_7,
                    MOEVAL_WGMMA_D8_15);
  } else {
    MOEVAL_WGMMA_RS("m64n32k16", "bf16", MOEVAL_WGMMA_REGS_16, "%16,%17,%18,%19", "%20", MOEVAL_WGMMA_D0_7,
                    MOEVAL_WGMMA_D8_15);
  }
}

template <typename T>
__device__ inline void wgmma_m64n64k16(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t b_desc) {
  if constexpr (std::is_same_v<T, __half>) {
    MOEVAL_WGMMA_RS("m64n64k16", "f16", MOEVAL_WGMMA_REGS_32, "%32,%33,%34,%35", "%36", MOEVAL_WGMMA_D0_31);
  } else {
    MOEVAL_WGMMA_RS("m64n64k16", "bf16", MOEVAL_WGMMA_REGS_32, "%32,%33,%34,%35", "%36", MOEVAL_WGMMA_D0_31);
  }
}

// An item of 64 rows with its expert's tail of up to 16 rows (marlin_wgmma_producer_kernel.cuh).
template <typename T>
__device__ inline void wgmma_m64n80k16(float (&d)[40], const std::uint32_t (&a)[4], std::uint64_t b_desc) {
  if constexpr (std::is_same_v<T, __half>) {
    MOEVAL_WGMMA_RS("m64n80k16", "f16", MOEVAL_WGMMA_REGS_40, "%40,%41,%42,%43", "%44", MOEVAL_WGMMA_D0_31,
                    MOEVAL_WGMMA_D32_39);
  } else {
    MOEVAL_WGMMA_RS("m64n80k16", "bf16", MOEVAL_WGMMA_REGS_40, "%40,%41,%42,%43", "%44", MOEVAL_WGMMA_D0_31,
                    MOEVAL_WGMMA_D32_39);
  }
}

template <typename T>
__device__ inline void wgmma_m64n128k16(float (&d)[64], const std::uint32_t (&a)[4], std::uint64_t b_desc) {
  if constexpr (std::is_same_v<T, __half>) {
    MOEVAL_WGMMA_RS("m64n128k16", "f16", MOEVAL_WGMMA_REGS_64, "%64,%65,%66,%67", "%68", MOEVAL_WGMMA_D0_31,
                    MOEVAL_WGMMA_D32_63);
  } else {
    MOEVAL_WGMMA_RS("m64n128k16", "bf16", MOEVAL_WGMMA_REGS_64, "%64,%65,%66,%67", "%68", MOEVAL_WGMMA_D0_31,
                    MOEVAL_WGMMA_D32_63);
  }
}

#undef MOEVAL_WGMMA_RS
#undef MOEVAL_WGMMA_REGS_64
#undef MOEVAL_WGMMA_REGS_40
#undef MOEVAL_WGMMA_REGS_32
#undef MOEVAL_WGMMA_REGS_16
#undef MOEVAL_WGMMA_REGS_8
#undef MOEVAL_WGMMA_D32_63
#undef MOEVAL_WGMMA_D32_39
#undef MOEVAL_WGMMA_D0_31
#undef MOEVAL_WGMMA_D8_15
#undef MOEVAL_WGMMA_D0_7

template <typename T, int N>
__device__ inline void wgmma_m64k16(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t b_desc) {
  if constexpr (N == 16) {
    wgmma_m64n16k16<T>(d, a, b_desc);
  } else if constexpr (N == 32) {
    wgmma_m64n32k16<T>(d, a, b_desc);
  } else if constexpr (N == 64) {
    wgmma_m64n64k16<T>(d, a, b_desc);
  } else if constexpr (N == 80) {
    wgmma_m64n80k16<T>(d, a, b_desc);
  } else {
    static_assert(N == 128, "the Marlin GEMM issues N = 16, 32, 64, 80 or 128");
    wgmma_m64n128k16<T>(d, a, b_desc);
  }
}

}  // namespace moeval::kernels::detail
