#include "moeval/testbed/guarded_buffer.h"

#include <cuda_runtime.h>

#include <utility>

#include "moeval/kernels/device_info.h"

namespace moeval::testbed {
namespace {

using kernels::check_cuda;
using kernels::DeviceGuard;

// Pattern byte for guard position i: varies along the guard so a memset-like overrun of any
// constant is caught, and differs between the two guards.
std::uint8_t guard_byte(std::size_t i, bool after) {
  return std::uint8_t((i * 131u + (after ? 0x5Au : 0xA5u)) ^ (i >> 8));
}

std::vector<std::uint8_t> guard_pattern(bool after) {
  std::vector<std::uint8_t> p(GuardedBuffer::kGuardBytes);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = guard_byte(i, after);
  return p;
}

}  // namespace

GuardedBuffer::GuardedBuffer(std::string name, int device, std::size_t bytes, std::uint8_t poison_byte)
    : name_(std::move(name)), device_(device), bytes_(bytes) {
  DeviceGuard guard(device_);
  void* raw = nullptr;
  check_cuda(cudaMalloc(&raw, bytes_ + 2 * kGuardBytes), ("cudaMalloc for " + name_).c_str());
  base_ = static_cast<std::uint8_t*>(raw);
  payload_ = base_ + kGuardBytes;
  const auto before = guard_pattern(false);
  const auto after = guard_pattern(true);
  check_cuda(cudaMemcpy(base_, before.data(), kGuardBytes, cudaMemcpyHostToDevice), "guard upload");
  check_cuda(cudaMemcpy(payload_ + bytes_, after.data(), kGuardBytes, cudaMemcpyHostToDevice), "guard upload");
  poison(poison_byte);
}

GuardedBuffer GuardedBuffer::upload(std::string name, int device, const void* host, std::size_t bytes) {
  GuardedBuffer b(std::move(name), device, bytes);
  if (bytes > 0) {
    DeviceGuard guard(device);
    check_cuda(cudaMemcpy(b.payload_, host, bytes, cudaMemcpyHostToDevice), ("upload of " + b.name_).c_str());
    const auto* p = static_cast<const std::uint8_t*>(host);
    b.uploaded_.assign(p, p + bytes);
  }
  return b;
}

GuardedBuffer::~GuardedBuffer() { release(); }

GuardedBuffer::GuardedBuffer(GuardedBuffer&& other) noexcept { *this = std::move(other); }

GuardedBuffer& GuardedBuffer::operator=(GuardedBuffer&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    device_ = other.device_;
    bytes_ = other.bytes_;
    base_ = std::exchange(other.base_, nullptr);
    payload_ = std::exchange(other.payload_, nullptr);
    uploaded_ = std::move(other.uploaded_);
  }
  return *this;
}

void GuardedBuffer::release() noexcept {
  if (base_ != nullptr) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device_);
    cudaFree(base_);
    cudaSetDevice(previous);
    base_ = payload_ = nullptr;
  }
}

void GuardedBuffer::poison(std::uint8_t poison_byte) {
  if (bytes_ == 0) return;
  DeviceGuard guard(device_);
  check_cuda(cudaMemset(payload_, poison_byte, bytes_), ("poison of " + name_).c_str());
}

void GuardedBuffer::download(void* host, std::size_t bytes) const {
  if (bytes > bytes_) throw std::invalid_argument(name_ + ": download of " + std::to_string(bytes) + " bytes exceeds the payload");
  if (bytes == 0) return;
  DeviceGuard guard(device_);
  check_cuda(cudaDeviceSynchronize(), ("synchronize before download of " + name_).c_str());
  check_cuda(cudaMemcpy(host, payload_, bytes, cudaMemcpyDeviceToHost), ("download of " + name_).c_str());
}

std::string GuardedBuffer::check_guards() const {
  DeviceGuard guard(device_);
  check_cuda(cudaDeviceSynchronize(), ("synchronize before guard check of " + name_).c_str());
  std::vector<std::uint8_t> seen(kGuardBytes);
  std::string report;
  for (bool after : {false, true}) {
    const std::uint8_t* where = after ? payload_ + bytes_ : base_;
    check_cuda(cudaMemcpy(seen.data(), where, kGuardBytes, cudaMemcpyDeviceToHost), "guard download");
    const auto expected = guard_pattern(after);
    std::size_t first = kGuardBytes, count = 0;
    for (std::size_t i = 0; i < kGuardBytes; ++i) {
      if (seen[i] != expected[i]) {
        if (first == kGuardBytes) first = i;
        ++count;
      }
    }
    if (count > 0) {
      // Offsets relative to the payload start: negative before it, >= bytes after it.
      const long long offset = after ? (long long)(bytes_ + first) : (long long)first - (long long)kGuardBytes;
      report += (report.empty() ? "" : "; ") + name_ + ": guard " + (after ? "after" : "before") +
                " payload overwritten at byte offset " + std::to_string(offset) + " (" + std::to_string(count) +
                " bytes differ)";
    }
  }
  return report;
}

std::string GuardedBuffer::check_unchanged() const {
  if (uploaded_.empty()) return {};
  std::vector<std::uint8_t> now(bytes_);
  download(now.data(), bytes_);
  for (std::size_t i = 0; i < bytes_; ++i) {
    if (now[i] != uploaded_[i]) {
      return name_ + ": input modified at byte " + std::to_string(i) + " (was " + std::to_string(uploaded_[i]) +
             ", now " + std::to_string(now[i]) + ")";
    }
  }
  return {};
}

std::vector<std::string> memory_errors(const std::vector<const GuardedBuffer*>& buffers) {
  std::vector<std::string> errors;
  for (const GuardedBuffer* b : buffers) {
    if (auto e = b->check_guards(); !e.empty()) errors.push_back(e);
    if (auto e = b->check_unchanged(); !e.empty()) errors.push_back(e);
  }
  return errors;
}

}  // namespace moeval::testbed
