// Private: a device copy of a host vector (or an uninitialised array) on the current device.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "moeval/kernels/device_info.h"

namespace moeval::reference::detail {

template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) : count_(count) {
    if (count_ > 0) kernels::check_cuda(cudaMalloc(&ptr_, count_ * sizeof(T)), "cudaMalloc");
  }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
    if (count_ > 0) kernels::check_cuda(cudaMemcpy(ptr_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  ~DeviceArray() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return ptr_; }  // null when empty: optional inputs stay null
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) kernels::check_cuda(cudaMemcpy(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace moeval::reference::detail
