// Median device time of a piece of stream work, with the L2 flushed before every timed run so
// small working sets (a few experts of a small model) are timed from HBM, not from the cache.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>

namespace moeval::bench {

// How the L2 is emptied before each timed run (a 256 MiB buffer, ≫ the H200's 50 MiB of L2).
//   clean: a kernel reads the buffer through L2, leaving only clean lines: the timed work starts on
//          a cache that holds nothing of its data and owes nothing to memory, as after kernels that
//          read their inputs and wrote little (a decode step's activations are kilobytes).
//   dirty: cudaMemset of the buffer (the bench's method before 2026-12-03): L2 is then full of
//          dirty lines, and the timed work also pays for writing back up to 50 MiB of them as its
//          reads evict them. Measured on the H200 (same binary, same run): 5–18 % longer on the
//          decode cells, which read 12–120 MB (docs/bench.md); within 1 % from ~400 µs up.
enum class L2Flush { clean, dirty };

std::string to_string(L2Flush flush);
L2Flush l2_flush_from_string(const std::string& name);  // "clean" or "dirty"; else std::invalid_argument

class EventTimer {
 public:
  explicit EventTimer(cudaStream_t stream, L2Flush flush = L2Flush::clean);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Runs `work` `warmup` times untimed, then `repeats` times each between two events after an
  // L2 flush; returns the median in seconds. `work` must enqueue on the timer's stream (it may
  // synchronize; then the time includes its host part).
  double median_seconds(const std::function<void()>& work, int warmup, int repeats);

 private:
  void flush_l2(int run);

  cudaStream_t stream_;
  L2Flush flush_mode_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* flush_ = nullptr;  // larger than L2; read (clean) or overwritten (dirty) before each timed run
  std::uint32_t* sink_ = nullptr;  // the clean flush's output word
};

}  // namespace moeval::bench
