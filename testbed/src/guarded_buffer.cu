#include "moeval/testbed/guarded_buffer.h"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExtMem.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "moeval/kernels/device_info.h"

namespace moeval::testbed {
namespace {

using kernels::check_cuda;
using kernels::DeviceGuard;

bool exact_size_mode = false;

// The testbed's NVTX domain, for the sanitizer's view of fenced buffers (created on first use,
// after the CUDA runtime is up, as the sanitizer requires). Without a sanitizer attached the NVTX
// calls do nothing.
nvtxDomainHandle_t sanitizer_domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("moeval testbed");
  return domain;
}

// Registers [base, base + total) as a heap whose one region is [payload, payload + bytes): an
// access to the rest is an error under memcheck. Returns the heap handle.
void* register_fenced(void* base, std::size_t total, void* payload, std::size_t bytes) {
  nvtxMemVirtualRangeDesc_t heap_range{total, base};
  nvtxMemHeapDesc_t heap{};
  heap.extCompatID = NVTX_EXT_COMPATID_MEM;
  heap.structSize = sizeof(heap);
  heap.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  heap.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  heap.typeSpecificDescSize = sizeof(heap_range);
  heap.typeSpecificDesc = &heap_range;
  const nvtxMemHeapHandle_t handle = nvtxMemHeapRegister(sanitizer_domain(), &heap);
  nvtxMemVirtualRangeDesc_t region_range{bytes, payload};
  nvtxMemRegionsRegisterBatch_t region{};
  region.extCompatID = NVTX_EXT_COMPATID_MEM;
  region.structSize = sizeof(region);
  region.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  region.heap = handle;
  region.regionCount = 1;
  region.regionDescElementSize = sizeof(region_range);
  region.regionDescElements = &region_range;
  nvtxMemRegionsRegister(sanitizer_domain(), &region);
  return handle;
}

// Pattern byte for guard position i: varies along the guard so a memset-like overrun of any
// constant is caught, and differs between the two guards.
std::uint8_t guard_byte(std::size_t i, bool after) {
  return std::uint8_t((i * 131u + (after ? 0x5Au : 0xA5u)) ^ (i >> 8));
}

// Guard element j of `element_bytes`: always a NaN of that width, with a payload that varies along
// the guard (and between the guards), and alternating signs, so a constant overrun still differs
// from most of it and an index read from it is far off in either direction.
//   16-bit: 0x7F80 | m or 0xFF80 | m, m in 1..126: exponent all ones in bf16 (8 bits) and fp16
//           (5 bits), mantissa non-zero in both — a NaN either way; m = 127 is left out, since
//           0xFF80 | 127 = 0xFFFF, which a 0xFF memset of that element would leave unchanged.
//   32-bit: 0x7F800000 | m or 0xFF800000 | m, m in 1..2^22-1: an fp32 NaN; as an int32 index
//           ≥ 2^31 − 2^23 or in −2^23 .. −2^22, both millions of elements outside the buffer.
std::uint32_t guard_element(std::size_t j, bool after, std::size_t element_bytes) {
  const std::uint32_t mix = std::uint32_t(j * 2654435761u) ^ (after ? 0x5A5A5Au : 0x3C3C3Cu);
  if (element_bytes == 2) return ((j & 1) ? 0xFF80u : 0x7F80u) | (1u + mix % 126u);
  return ((j & 1) ? 0xFF800000u : 0x7F800000u) | (1u + mix % 0x3FFFFFu);
}

}  // namespace

std::vector<std::uint8_t> guard_pattern(bool after, std::size_t bytes, std::size_t element_bytes) {
  std::vector<std::uint8_t> p(bytes);
  if (element_bytes == 1) {
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = guard_byte(i, after);
    return p;
  }
  for (std::size_t i = 0; i < p.size(); ++i) {
    // Little-endian bytes of element i / element_bytes.
    p[i] = std::uint8_t(guard_element(i / element_bytes, after, element_bytes) >> (8 * (i % element_bytes)));
  }
  return p;
}

void GuardedBuffer::set_exact_size(bool exact) { exact_size_mode = exact; }
bool GuardedBuffer::exact_size() { return exact_size_mode; }

GuardedBuffer::GuardedBuffer(std::string name, int device, std::size_t bytes, std::size_t element_bytes,
                             std::uint8_t poison_byte)
    : name_(std::move(name)), device_(device), bytes_(bytes), element_bytes_(element_bytes),
      guard_(exact_size_mode ? 0 : kGuardBytes) {
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4) {
    throw std::invalid_argument(name_ + ": element_bytes = " + std::to_string(element_bytes) + "; allowed 1, 2 or 4");
  }
  if (guard_ == 0 && bytes_ == 0) return;  // exact size: nothing to allocate (data() is null)
  DeviceGuard guard(device_);
  void* raw = nullptr;
  const std::size_t total = bytes_ + 2 * (guard_ + fence_bytes());
  check_cuda(cudaMalloc(&raw, total), ("cudaMalloc for " + name_).c_str());
  base_ = static_cast<std::uint8_t*>(raw);
  payload_ = base_ + guard_ + fence_bytes();
  if (fence_bytes() > 0) sanitizer_heap_ = register_fenced(base_, total, payload_, bytes_);
  if (guard_ > 0) {
    const auto before = guard_pattern(false, guard_, element_bytes_);
    const auto after = guard_pattern(true, guard_, element_bytes_);
    check_cuda(cudaMemcpy(base_, before.data(), guard_, cudaMemcpyHostToDevice), "guard upload");
    check_cuda(cudaMemcpy(payload_ + bytes_, after.data(), guard_, cudaMemcpyHostToDevice), "guard upload");
  }
  poison(poison_byte);
}

GuardedBuffer GuardedBuffer::upload(std::string name, int device, const void* host, std::size_t bytes,
                                    std::size_t element_bytes) {
  GuardedBuffer b(std::move(name), device, bytes, element_bytes);
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
    element_bytes_ = other.element_bytes_;
    guard_ = other.guard_;
    sanitizer_heap_ = std::exchange(other.sanitizer_heap_, nullptr);
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
    if (sanitizer_heap_ != nullptr) {
      nvtxMemHeapUnregister(sanitizer_domain(), static_cast<nvtxMemHeapHandle_t>(sanitizer_heap_));
      sanitizer_heap_ = nullptr;
    }
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
  if (guard_ == 0) return {};  // exact size: compute-sanitizer watches the fences instead
  DeviceGuard guard(device_);
  check_cuda(cudaDeviceSynchronize(), ("synchronize before guard check of " + name_).c_str());
  std::vector<std::uint8_t> seen(guard_);
  std::string report;
  for (bool after : {false, true}) {
    const std::uint8_t* where = after ? payload_ + bytes_ : base_;
    check_cuda(cudaMemcpy(seen.data(), where, guard_, cudaMemcpyDeviceToHost), "guard download");
    const auto expected = guard_pattern(after, guard_, element_bytes_);
    std::size_t first = guard_, count = 0;
    for (std::size_t i = 0; i < guard_; ++i) {
      if (seen[i] != expected[i]) {
        if (first == guard_) first = i;
        ++count;
      }
    }
    if (count > 0) {
      // Offsets relative to the payload start: negative before it, >= bytes after it.
      const long long offset = after ? (long long)(bytes_ + first) : (long long)first - (long long)guard_;
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
