#include "parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace moeval::reference {

void parallel_for(std::int64_t count, const std::function<void(std::int64_t)>& body) {
  if (count <= 0) return;
  const std::int64_t workers = std::min<std::int64_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::int64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::int64_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      try {
        body(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next.store(count);  // stop handing out work
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::int64_t w = 1; w < workers; ++w) threads.emplace_back(work);
  work();  // the calling thread is a worker too
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace moeval::reference
