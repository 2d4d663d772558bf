#include "workspace.h"

#include <cuda_runtime.h>

#include "moeval/kernels/device_info.h"

namespace moeval::reference::detail {

Workspace::~Workspace() {
  if (ptr_ != nullptr) cudaFree(ptr_);  // the owner's DeviceGuard is active (see CublasGemmPath)
}

void* Workspace::reserve(std::size_t bytes) {
  if (bytes <= bytes_) return ptr_;
  if (ptr_ != nullptr) kernels::check_cuda(cudaFree(ptr_), "cudaFree(workspace)");
  ptr_ = nullptr;
  bytes_ = 0;
  kernels::check_cuda(cudaMalloc(&ptr_, bytes), "cudaMalloc(workspace)");
  bytes_ = bytes;
  return ptr_;
}

}  // namespace moeval::reference::detail
