// Internal: launching a persistent kernel, whose thread blocks each loop over work items.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "moeval/kernels/device_info.h"

namespace moeval::kernels::detail {

// Opts `kernel` in to `smem_bytes` of dynamic shared memory per thread block where that is above the
// 48 KB every kernel gets; `name` prefixes the error (the entry point's name).
template <typename Kernel>
void opt_in_shared_memory(Kernel kernel, std::size_t smem_bytes, const char* name) {
  if (smem_bytes <= 48 * 1024) return;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes)),
             (std::string(name) + ": shared memory opt-in").c_str());
}

// The thread blocks of `kernel` that the current device runs at once (blocks per SM from the
// occupancy calculator, at least 1, × SMs), after the shared-memory opt-in: the grid of a
// persistent kernel.
template <typename Kernel>
std::int64_t resident_grid(Kernel kernel, int threads, std::size_t smem_bytes, const char* name) {
  const std::string where = name;
  int device = 0;
  int sms = 0;
  int per_sm = 0;
  check_cuda(cudaGetDevice(&device), (where + ": cudaGetDevice").c_str());
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), (where + ": SM count").c_str());
  opt_in_shared_memory(kernel, smem_bytes, name);
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes),
             (where + ": occupancy").c_str());
  return static_cast<std::int64_t>(sms) * (per_sm > 0 ? per_sm : 1);
}

// Launches `kernel` on the current device with as many thread blocks as fit on it at once
// (resident_grid), but no more than there can be work items; nothing when there are none.
// `name` prefixes the errors (the entry point's name). `smem_bytes` of dynamic shared memory per
// thread block.
// `likely_items` (> 0: the host's estimate of the items the kernel will find, which it only learns
// on the device): when one round of resident blocks covers them, the grid has that many blocks
// instead of a full round whose surplus blocks exit at once. Measured on the H200 (Marlin, decode
// cells of one round): 512 blocks for 512 items ran 15 % faster than 660 of which 148 exit; where
// more rounds are needed, shrinking the grid to even out the rounds measured slower (up to 10 %),
// so it stays at a full round there. More items than estimated are still covered (a second round).
// `max_grid` (> 0) caps the grid (the caller's thread-block budget).
template <typename Params>
void launch_persistent(void (*kernel)(Params), int threads, std::int64_t max_items, const Params& params,
                       cudaStream_t stream, const char* name, std::size_t smem_bytes = 0, std::int64_t likely_items = 0,
                       std::int64_t max_grid = 0) {
  std::int64_t resident = resident_grid(kernel, threads, smem_bytes, name);
  if (max_grid > 0 && max_grid < resident) resident = max_grid;
  if (likely_items > 0 && likely_items < resident) resident = likely_items;
  const unsigned grid = static_cast<unsigned>(max_items < resident ? max_items : resident);
  if (grid == 0) return;
  kernel<<<grid, threads, smem_bytes, stream>>>(params);
  check_cuda(cudaGetLastError(), (std::string(name) + ": kernel launch").c_str());
}

}  // namespace moeval::kernels::detail
