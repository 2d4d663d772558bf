// Facts about the device that owns a pointer, and a scoped guard that makes it current.
//
// Every kernel entry point switches to the device of its buffers before launching (the cuda:1
// bug class: a launch on the current device with pointers that live on another one).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace moeval::kernels {

// Throws std::runtime_error naming `what` when a CUDA runtime call fails.
void check_cuda(cudaError_t status, const char* what);

// Device that owns `ptr`; throws std::invalid_argument naming `name` when the pointer is null,
// host memory or unknown to CUDA.
int device_of(const void* ptr, const char* name);

// Makes `device` current for the guard's lifetime and restores the previous device afterwards.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace moeval::kernels
