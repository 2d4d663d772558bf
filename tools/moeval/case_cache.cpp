#include "case_cache.h"

#include "gpu_reference.h"
#include "moeval/reference/gemm_reference.h"

namespace moeval::cli {

std::shared_ptr<const GemmInputs> CaseCache::get(const MoeProblem& problem, ReferenceKind reference, int device) {
  const std::string key = problem.name() + " " + std::string(to_string(reference));
  std::promise<std::shared_ptr<const GemmInputs>> promise;
  std::shared_future<std::shared_ptr<const GemmInputs>> future;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        future = it->second;
        break;
      }
    }
    if (!future.valid()) {
      future = promise.get_future().share();
      entries_.emplace_front(key, future);
      if (entries_.size() > capacity_) entries_.pop_back();
      ++builds_;
    } else {
      return future.get();
    }
  }
  try {
    auto inputs = std::make_shared<GemmInputs>();
    inputs->gemm_case = build_gemm_case(problem);
    inputs->reference = reference == ReferenceKind::gpu_cublas ? gpu_reference_gemm(inputs->gemm_case, device)
                                                               : reference::reference_gemm(inputs->gemm_case);
    promise.set_value(std::move(inputs));
  } catch (...) {
    promise.set_exception(std::current_exception());
  }
  return future.get();
}

}  // namespace moeval::cli
