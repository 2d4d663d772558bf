// Device buffers with guard canaries on both sides, poisoned or uploaded payloads, and a check
// that nothing outside the payload was written (TensorRT-LLM habit: poison, run, inspect).
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

  // Allocates `bytes` (may be 0) of payload on `device`; the payload is filled with `poison_byte`
  // (0xFF makes every fp16/bf16 element a NaN, so an unwritten output cannot pass), guards with a
  // position-dependent pattern.
  GuardedBuffer(std::string name, int device, std::size_t bytes, std::uint8_t poison_byte = 0xFF);
  ~GuardedBuffer();
  GuardedBuffer(GuardedBuffer&& other) noexcept;
  GuardedBuffer& operator=(GuardedBuffer&& other) noexcept;
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  // Allocates and uploads `bytes` from host memory; remembers a copy so `unchanged()` can prove an
  // input was not written.
  static GuardedBuffer upload(std::string name, int device, const void* host, std::size_t bytes);
  template <class T>
  static GuardedBuffer upload(std::string name, int device, const std::vector<T>& host) {
    return upload(std::move(name), device, host.data(), host.size() * sizeof(T));
  }

  void* data() const { return payload_; }
  template <class T>
  T* as() const { return static_cast<T*>(data()); }
  std::size_t bytes() const { return bytes_; }
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

  std::string name_;
  int device_ = 0;
  std::size_t bytes_ = 0;
  std::uint8_t* base_ = nullptr;     // start of the allocation (front guard)
  std::uint8_t* payload_ = nullptr;  // base_ + kGuardBytes
  std::vector<std::uint8_t> uploaded_;
};

// Every guard overrun and modified input among `buffers`, one line each (empty when all are clean).
std::vector<std::string> memory_errors(const std::vector<const GuardedBuffer*>& buffers);

}  // namespace moeval::testbed
