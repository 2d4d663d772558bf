#include <algorithm>
#include <stdexcept>
#include <vector>

#include "moeval/bench/event_timer.h"
#include "moeval/bench/timing_kernels.h"
#include "moeval/kernels/device_info.h"

namespace moeval::bench {
namespace {
constexpr std::size_t kFlushBytes = std::size_t{256} << 20;  // 256 MiB ≫ 50 MiB L2 of an H200
}

std::string to_string(L2Flush flush) { return flush == L2Flush::clean ? "clean" : "dirty"; }

L2Flush l2_flush_from_string(const std::string& name) {
  if (name == "clean") return L2Flush::clean;
  if (name == "dirty") return L2Flush::dirty;
  throw std::invalid_argument("L2 flush '" + name + "': allowed clean or dirty");
}

EventTimer::EventTimer(cudaStream_t stream, L2Flush flush) : stream_(stream), flush_mode_(flush) {
  kernels::check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
  kernels::check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
  kernels::check_cuda(cudaMalloc(&flush_, kFlushBytes), "cudaMalloc (L2 flush buffer)");
  kernels::check_cuda(cudaMalloc(&sink_, sizeof(std::uint32_t)), "cudaMalloc (L2 flush sink)");
  // The clean flush reads the buffer: give it defined contents once.
  kernels::check_cuda(cudaMemsetAsync(flush_, 0x5A, kFlushBytes, stream_), "L2 flush buffer fill");
}

EventTimer::~EventTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaFree(flush_);
  cudaFree(sink_);
}

void EventTimer::flush_l2(int run) {
  if (flush_mode_ == L2Flush::clean) {
    read_through_l2(flush_, static_cast<std::int64_t>(kFlushBytes), sink_, stream_);
  } else {
    kernels::check_cuda(cudaMemsetAsync(flush_, run & 0xFF, kFlushBytes, stream_), "L2 flush");
  }
}

double EventTimer::median_seconds(const std::function<void()>& work, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    flush_l2(i);
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
