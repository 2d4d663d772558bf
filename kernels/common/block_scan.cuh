// Block-wide exclusive prefix sum of one int per thread (blockDim.x a multiple of 32, ≤ 1024).
#pragma once

namespace moeval::kernels::detail {

// Returns the exclusive prefix of `value` over the block and writes the block total to *total.
// `scratch` must hold 32 ints of shared memory; every thread of the block must call it.
__device__ inline int block_exclusive_scan(int value, int* scratch, int* total) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
  int inclusive = value;
  for (int d = 1; d < 32; d <<= 1) {
    const int other = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += other;
  }
  if (lane == 31) scratch[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    int w = lane < warps ? scratch[lane] : 0;
    for (int d = 1; d < 32; d <<= 1) {
      const int other = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += other;
    }
    scratch[lane] = w;  // inclusive over warps
  }
  __syncthreads();
  const int warp_base = warp == 0 ? 0 : scratch[warp - 1];
  *total = scratch[warps - 1];
  __syncthreads();  // scratch may be reused by the caller's next call
  return warp_base + inclusive - value;
}

}  // namespace moeval::kernels::detail
