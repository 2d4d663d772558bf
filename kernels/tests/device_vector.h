// Test helper: a typed device allocation filled from / copied back to host vectors.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace moeval::kernels::test {

inline void cuda_ok(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

template <typename T>
class DeviceVector {
 public:
  explicit DeviceVector(std::size_t count) : count_(count) {
    cuda_ok(cudaMalloc(&ptr_, (count == 0 ? 1 : count) * sizeof(T)), "cudaMalloc");
  }
  explicit DeviceVector(const std::vector<T>& host) : DeviceVector(host.size()) { upload(host); }
  ~DeviceVector() { cudaFree(ptr_); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::invalid_argument("DeviceVector::upload: size mismatch");
    cuda_ok(cudaMemcpy(ptr_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  // Fills every byte with `byte` (poison before a kernel writes, so unwritten entries show).
  void poison(int byte) { cuda_ok(cudaMemset(ptr_, byte, count_ * sizeof(T)), "poison"); }
  std::vector<T> download() const {
    cuda_ok(cudaDeviceSynchronize(), "kernel");
    std::vector<T> host(count_);
    cuda_ok(cudaMemcpy(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }
  T* get() { return ptr_; }
  const T* get() const { return ptr_; }
  std::size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace moeval::kernels::test
