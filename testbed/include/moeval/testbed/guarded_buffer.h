// Device buffers with guard canaries on both sides, poisoned or uploaded payloads, and a check
// that nothing outside the payload was written (TensorRT-LLM habit: poison, run, inspect).
//
// The guards also catch READS past either end: they hold NaNs of the buffer's element width
// (16-bit: a pattern that is NaN both as fp16 and as bf16; 32-bit: fp32 NaNs, which read as int32
// indices are about ±2^31 or −2^23 away, far outside any allocation), so a stray read of an
// activation, a scale, a routing weight or an index poisons the output or faults, and the
// comparator (NaN never passes) or the CUDA error names it. Byte buffers (packed codes) have no NaN;
// their guards keep a position-dependent pattern. For compute-sanitizer, set_exact_size(true)
// drops the canaries and fences the payload instead: the allocation keeps kGuardBytes on each side,
// but only the payload is registered with the sanitizer (NVTX memory API: the allocation as a
// sub-allocating heap, the payload as its one region), so memcheck names any access to a fence.
// Why not the payload alone: cudaMalloc rounds sizes up and may place the next live buffer right
// after it, and memcheck checks addresses, not which buffer a pointer came from, so a read one
// row past a buffer could land in addressable memory and pass unseen (docs/testing.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace moeval::testbed {

class GuardedBuffer {
 public:
  // Guard bytes on each side: larger than any tile a kernel could overrun by one step.
  static constexpr std::size_t kGuardBytes = 64 * 1024;

  // Process-wide: buffers created afterwards have no canaries (fenced allocations for
  // compute-sanitizer memcheck; check_guards() then has nothing to compare and says so by "").
  static void set_exact_size(bool exact);
  static bool exact_size();

  // Allocates `bytes` (may be 0) of payload on `device` holding elements of `element_bytes`
  // (1, 2 or 4; std::invalid_argument otherwise), which picks the guards' NaN pattern; the payload
  // is filled with `poison_byte` (0xFF makes every fp16/bf16/fp32 element a NaN, so an unwritten
  // output cannot pass).
  GuardedBuffer(std::string name, int device, std::size_t bytes, std::size_t element_bytes = 1,
                std::uint8_t poison_byte = 0xFF);
  ~GuardedBuffer();
  GuardedBuffer(GuardedBuffer&& other) noexcept;
  GuardedBuffer& operator=(GuardedBuffer&& other) noexcept;
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  // Allocates and uploads `bytes` from host memory; remembers a copy so `unchanged()` can prove an
  // input was not written.
  static GuardedBuffer upload(std::string name, int device, const void* host, std::size_t bytes,
                              std::size_t element_bytes = 1);
  template <class T>
  static GuardedBuffer upload(std::string name, int device, const std::vector<T>& host) {
    return upload(std::move(name), device, host.data(), host.size() * sizeof(T), sizeof(T));
  }

  void* data() const { return payload_; }
  template <class T>
  T* as() const { return static_cast<T*>(data()); }
  std::size_t bytes() const { return bytes_; }
  std::size_t guard_bytes() const { return guard_; }
  int device() const { return device_; }
  const std::string& name() const { return name_; }

  // Re-poisons the payload (between repeated runs).
  void poison(std::uint8_t poison_byte = 0xFF);
  void download(void* host, std::size_t bytes) const;
  template <class T>
  std::vector<T> download() const {
    std::vector<T> out(bytes_ / sizeof(T));
    download(out.data(), out.size() * sizeof(T));
    return out;
  }

  // Empty when both guards hold their pattern; otherwise "<name>: guard before/after payload
  // overwritten at byte offset X (N bytes differ)".
  std::string check_guards() const;
  // Empty when an uploaded payload still equals what was uploaded; otherwise names the first
  // differing byte. Buffers not created by upload() always pass.
  std::string check_unchanged() const;

 private:
  void release() noexcept;
  // Exact-size mode (guard_ == 0): unregistered bytes on each side, which compute-sanitizer reports
  // any access to; with canaries, none.
  std::size_t fence_bytes() const { return guard_ == 0 ? kGuardBytes : 0; }

  std::string name_;
  int device_ = 0;
  std::size_t bytes_ = 0;
  std::size_t element_bytes_ = 1;
  std::size_t guard_ = kGuardBytes;  // canary bytes on each side; 0 in exact-size mode
  std::uint8_t* base_ = nullptr;     // start of the allocation (front guard or fence)
  std::uint8_t* payload_ = nullptr;  // base_ + guard_ + fence_bytes()
  void* sanitizer_heap_ = nullptr;   // exact-size mode: the NVTX heap of the allocation
  std::vector<std::uint8_t> uploaded_;
};

// The `bytes` guard bytes before (after = false) or after the payload of a buffer of
// `element_bytes` elements (what a stray read finds there; see the top of this file).
std::vector<std::uint8_t> guard_pattern(bool after, std::size_t bytes, std::size_t element_bytes);

// Every guard overrun and modified input among `buffers`, one line each (empty when all are clean).
std::vector<std::string> memory_errors(const std::vector<const GuardedBuffer*>& buffers);

}  // namespace moeval::testbed
