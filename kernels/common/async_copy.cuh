// Internal: cp.async wrappers (global → shared without holding registers while in flight).
#pragma once

#include <cstdint>

namespace moeval::kernels::detail {

// The 32-bit shared-memory address of a generic pointer into shared memory (what cp.async and
// ldmatrix take).
__device__ inline unsigned shared_address(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// 16 bytes from global memory into shared memory, skipping L1, with L2 asked to fetch the 256 bytes
// around the request (weights are streamed once: the next requests of the row then hit L2).
// The _at forms take the 32-bit shared-memory address: a loop that adds compile-time offsets to
// one base address per lane lets ptxas put the offsets into the copy instruction, where pointers
// converted per copy were recomputed from the warp and lane indices at every copy.
__device__ inline void copy_async_16_at(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" : : "r"(dst), "l"(src) : "memory");
}
__device__ inline void copy_async_16(void* slot, const void* src) { copy_async_16_at(shared_address(slot), src); }
// 16 bytes through L1 (data that neighbouring warps read too, such as scales).
__device__ inline void copy_async_16_cached(void* slot, const void* src) {
  const unsigned dst = shared_address(slot);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" : : "r"(dst), "l"(src) : "memory");
}
// 8 bytes through L1 (cp.async's L2-only form takes 16-byte copies only).
__device__ inline void copy_async_8(void* slot, const void* src) {
  const unsigned dst = shared_address(slot);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" : : "r"(dst), "l"(src) : "memory");
}
// 4 bytes through L1 (activation pairs: a moe block's rows are read by every N item of the block).
__device__ inline void copy_async_4_at(unsigned dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" : : "r"(dst), "l"(src) : "memory");
}
__device__ inline void copy_async_4(void* slot, const void* src) { copy_async_4_at(shared_address(slot), src); }
// 16 bytes through L1, or 16 zero bytes without any read when `fill` is false (rows and K tiles
// a warp does not need: padding rows of a moe block, pieces past the end of its K range).
__device__ inline void copy_async_16_or_zero(void* slot, const void* src, bool fill) {
  const unsigned dst = shared_address(slot);
  const int bytes = fill ? 16 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" : : "r"(dst), "l"(src), "r"(bytes) : "memory");
}
__device__ inline void commit_async() { asm volatile("cp.async.commit_group;\n" : : : "memory"); }
// Waits until at most PENDING of this thread's committed groups are still in flight.
template <int PENDING>
__device__ inline void wait_async() { asm volatile("cp.async.wait_group %0;\n" : : "n"(PENDING) : "memory"); }

}  // namespace moeval::kernels::detail
