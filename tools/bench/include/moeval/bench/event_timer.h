// Median device time of a piece of stream work, with the L2 flushed before every timed run so
// small working sets (a few experts of a small model) are timed from HBM, not from the cache.
#pragma once

#include <cuda_runtime.h>

#include <functional>

namespace moeval::bench {

class EventTimer {
 public:
  explicit EventTimer(cudaStream_t stream);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Runs `work` `warmup` times untimed, then `repeats` times each between two events after an
  // L2 flush; returns the median in seconds. `work` must enqueue on the timer's stream (it may
  // synchronize; then the time includes its host part).
  double median_seconds(const std::function<void()>& work, int warmup, int repeats);

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* flush_ = nullptr;  // larger than L2; overwritten before each timed run
};

}  // namespace moeval::bench
