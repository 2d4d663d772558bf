#include <algorithm>
#include <vector>

#include "moeval/bench/event_timer.h"
#include "moeval/kernels/device_info.h"

namespace moeval::bench {
namespace {
constexpr std::size_t kFlushBytes = std::size_t{256} << 20;  // 256 MiB ≫ 50 MiB L2 of an H200
}

EventTimer::EventTimer(cudaStream_t stream) : stream_(stream) {
  kernels::check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
  kernels::check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
  kernels::check_cuda(cudaMalloc(&flush_, kFlushBytes), "cudaMalloc (L2 flush buffer)");
}

EventTimer::~EventTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaFree(flush_);
}

double EventTimer::median_seconds(const std::function<void()>& work, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    kernels::check_cuda(cudaMemsetAsync(flush_, i & 0xFF, kFlushBytes, stream_), "L2 flush");
    kernels::check_cuda(cudaEventRecord(start_, stream_), "cudaEventRecord");
    work();
    kernels::check_cuda(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    kernels::check_cuda(cudaEventSynchronize(stop_), "timed work");
    float ms = 0;
    kernels::check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    times.push_back(ms * 1e-3);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace moeval::bench
