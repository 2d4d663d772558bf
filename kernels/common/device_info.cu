#include "moeval/kernels/device_info.h"

namespace moeval::kernels {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
  }
}

int device_of(const void* ptr, const char* name) {
  if (ptr == nullptr) throw std::invalid_argument(std::string(name) + " is a null pointer; a device buffer is required");
  cudaPointerAttributes attr{};
  const cudaError_t status = cudaPointerGetAttributes(&attr, ptr);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls are not affected
    throw std::invalid_argument(std::string(name) + " is not a pointer CUDA knows: " + cudaGetErrorString(status));
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) {
    throw std::invalid_argument(std::string(name) + " points to host memory; a device buffer is required");
  }
  return attr.device;
}

DeviceGuard::DeviceGuard(int device) {
  check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) {
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    switched_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (switched_) cudaSetDevice(previous_);
}

}  // namespace moeval::kernels
