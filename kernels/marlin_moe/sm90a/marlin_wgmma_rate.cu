// The wgmma K loop alone (marlin_wgmma_k_loop_rate): the GEMM kernel's per-tile code on words and
// activations that stay in shared memory, timed over a persistent grid the size of the kernel's.
#include <algorithm>
#include <vector>

#include "../marlin_wgmma_kernel.cuh"
#include "../marlin_wgmma_rate_launch.h"

namespace moeval::kernels::detail {

// Shared memory as the GEMM kernel lays it out (same size, so the same thread blocks per SM): the
// chunk buffers, then each warp's ring. Words are pseudo-random codes; every scale is 1/16 and every
// activation 1, so the sums stay finite. The tile order walks the ring and the chunk buffers as the
// kernel does (stage s of a round of kStages, chunk buffer per 4 tiles).
template <typename T, int BITS, int ROWS>
__global__ void __launch_bounds__(kMarlinThreads, WgmmaTile<BITS, ROWS>::kBlocksPerSm)
    marlin_wgmma_rate_kernel(int k_tiles, float* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Tile = WgmmaTile<BITS, ROWS>;
  constexpr int kStages = Tile::kStages;
  constexpr int kGroups = Tile::kGroups;
  extern __shared__ __align__(1024) uint4 smem[];
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  char* const act_buffers = reinterpret_cast<char*>(smem);
  const unsigned act_shared = shared_address(act_buffers);
  char* const ring = act_buffers + Tile::kActBuffers * Tile::kChunkBytes + warp * Tile::kRingBytes;
  char* const slots = ring + lane * Tile::kUnit;
  const uint4* const scale_slots = reinterpret_cast<const uint4*>(ring + kStages * 32 * Tile::kLaneBytes) + lane;
  const std::uint16_t one = Half16<T>::from_float(1.0f);
  const std::uint16_t sixteenth = Half16<T>::from_float(0.0625f);
  auto* act16 = reinterpret_cast<std::uint16_t*>(act_buffers);
  for (int i = tid; i < Tile::kActBuffers * Tile::kChunkBytes / 2; i += kMarlinThreads) act16[i] = one;
  auto* ring32 = reinterpret_cast<std::uint32_t*>(ring);
  for (int i = lane; i < Tile::kRingBytes / 4; i += 32) ring32[i] = (static_cast<std::uint32_t>(tid) * 2654435761u) ^ (i * 40503u);
  __syncwarp();
  for (int i = lane; i < Tile::kScaleSlots * 32 * 4; i += 32) {
    ring32[kStages * 8 * Tile::kLaneBytes + i] = static_cast<std::uint32_t>(sixteenth) * 0x00010001u;
  }
  fence_proxy_async_shared();
  __syncthreads();

  GroupParams gp;
#pragma unroll
  for (int i = 0; i < 8; ++i) gp.zero2[i] = (Half16<T>::kBase | (BITS == 4 ? 8u : 128u)) * 0x00010001u;
  const int group_first = kGroups == 4 ? 0 : 2 * (warp & 1);
  float acc[kGroups][ROWS / 2];
#pragma unroll
  for (int gg = 0; gg < kGroups; ++gg) {
#pragma unroll
    for (int i = 0; i < ROWS / 2; ++i) acc[gg][i] = 0.0f;
  }
  std::uint32_t frag[kGroups][4];
  int compute_buf = 0;
  auto next_buf = [](int b) { return b + 1 == Tile::kActBuffers ? 0 : b + 1; };
  for (int round = 0; round < k_tiles; round += kStages) {  // k_tiles: a multiple of 16
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      if (s % 8 == 0) set_warp_scales<T, kGroups>(gp, scale_slots[32 * (s / 2)], group_first);  // group 128
      marlin_wgmma_tile<T, BITS, ROWS>(acc, frag, slots + 32 * Tile::kLaneBytes * s, gp,
                                       act_shared + static_cast<unsigned>(Tile::kChunkBytes) * compute_buf +
                                           32u * static_cast<unsigned>(s % Tile::kChunkTiles));
      if (s % Tile::kChunkTiles == Tile::kChunkTiles - 1) compute_buf = next_buf(compute_buf);
    }
  }
  wgmma_wait<0>();
  // Every accumulator is stored (keeps the MMAs alive). Adding them up instead made ptxas serialize
  // the wgmma (C7514: non-wgmma instructions reading accumulators inside the pipeline stage).
  float* mine = out + (static_cast<std::int64_t>(blockIdx.x) * kMarlinThreads + tid) * (kGroups * ROWS / 2);
#pragma unroll
  for (int gg = 0; gg < kGroups; ++gg) {
#pragma unroll
    for (int i = 0; i < ROWS / 2; ++i) mine[gg * ROWS / 2 + i] = acc[gg][i];
  }
#else
  __trap();  // never launched: the host checks the build and the device first
#endif
}

template <typename T, int BITS, int ROWS>
KLoopTiming time_rows(int k_tiles, int repeats) {
  auto kernel = marlin_wgmma_rate_kernel<T, BITS, ROWS>;
  constexpr std::size_t smem = marlin_wgmma_smem_bytes<BITS, ROWS>();
  // The GEMM's shared memory, so the same blocks per SM as the GEMM.
  const int grid = static_cast<int>(resident_grid(kernel, kMarlinThreads, smem, "marlin_wgmma_k_loop_rate"));
  float* out = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  check_cuda(cudaMalloc(&out, sizeof(float) * 128 * kMarlinThreads * grid), "marlin_wgmma_k_loop_rate: cudaMalloc");  // 128 sums a thread
  std::vector<float> ms;
  cudaError_t status = cudaEventCreate(&start);
  if (status == cudaSuccess) status = cudaEventCreate(&stop);
  for (int r = -1; status == cudaSuccess && r < repeats; ++r) {  // r = −1: warm-up
    status = cudaEventRecord(start);
    if (status == cudaSuccess) kernel<<<grid, kMarlinThreads, smem>>>(k_tiles, out);
    if (status == cudaSuccess) status = cudaGetLastError();
    if (status == cudaSuccess) status = cudaEventRecord(stop);
    if (status == cudaSuccess) status = cudaEventSynchronize(stop);
    float t = 0;
    if (status == cudaSuccess) status = cudaEventElapsedTime(&t, start, stop);
    if (status == cudaSuccess && r >= 0) ms.push_back(t);
  }
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  cudaFree(out);
  check_cuda(status, "marlin_wgmma_k_loop_rate: timed launches");
  std::sort(ms.begin(), ms.end());
  using Tile = WgmmaTile<BITS, ROWS>;
  KLoopTiming timing;
  timing.seconds = 1e-3 * ms[ms.size() / 2];
  timing.flops = 2.0 * 16 * ROWS * (64.0 * Tile::kTileColumns) * k_tiles * grid;
  return timing;
}

template <typename T, int BITS>
KLoopTiming time_marlin_wgmma_k_loop(int rows, int k_tiles, int repeats) {
  switch (rows) {
    case 16: return time_rows<T, BITS, 16>(k_tiles, repeats);
    case 32: return time_rows<T, BITS, 32>(k_tiles, repeats);
    case 128: return time_rows<T, BITS, 128>(k_tiles, repeats);
    default: return time_rows<T, BITS, 64>(k_tiles, repeats);
  }
}

template KLoopTiming time_marlin_wgmma_k_loop<__half, 4>(int, int, int);
template KLoopTiming time_marlin_wgmma_k_loop<__half, 8>(int, int, int);
template KLoopTiming time_marlin_wgmma_k_loop<__nv_bfloat16, 4>(int, int, int);
template KLoopTiming time_marlin_wgmma_k_loop<__nv_bfloat16, 8>(int, int, int);

}  // namespace moeval::kernels::detail
