// Internal (host): whether the Marlin GEMM's wgmma code can run on a device — built (sm_90 among
// the architectures: MOEVAL_HAVE_WGMMA) and a compute capability 9.0 device (sm_90a code runs on
// nothing else). Used by the GEMM's dispatch and by the K-loop rate measurement.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "moeval/kernels/device_info.h"

namespace moeval::kernels::detail {

// Why not, or empty when it can.
inline std::string wgmma_unavailable_on(int device) {
#if defined(MOEVAL_HAVE_WGMMA)
  int major = 0, minor = 0;
  const std::string context = "Marlin wgmma path: compute capability of device " + std::to_string(device);
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), context.c_str());
  check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), context.c_str());
  if (major != 9 || minor != 0) {
    return "it needs a compute capability 9.0 device (sm_90a code); device " + std::to_string(device) + " is " +
           std::to_string(major) + "." + std::to_string(minor);
  }
  return {};
#else
  (void)device;
  return "this build has no sm_90a code (sm_90 was not among CMAKE_CUDA_ARCHITECTURES)";
#endif
}

}  // namespace moeval::kernels::detail
