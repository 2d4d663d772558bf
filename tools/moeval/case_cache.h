// The GEMM case and its reference (the CPU's, or the GPU's for a case too large for the CPU:
// reference_choice.h), built once for the jobs that share them (a case on every
// kernel: building the weights of a case costs far more than running a kernel on it). Safe for
// several workers: the first to ask builds, any other asking for the same case waits for it. The
// few most recent cases are kept.
#pragma once

#include <cstddef>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "moeval/fixtures/cases.h"
#include "moeval/reference/reference_output.h"
#include "reference_choice.h"

namespace moeval::cli {

struct GemmInputs {
  GemmCase gemm_case;
  reference::ReferenceOutput reference;
};

class CaseCache {
 public:
  explicit CaseCache(std::size_t capacity) : capacity_(capacity) {}
  // The case of `problem` and its reference, the GPU reference computed on `device`; rethrows what
  // building them threw (to every waiter).
  std::shared_ptr<const GemmInputs> get(const MoeProblem& problem, ReferenceKind reference = ReferenceKind::cpu_fp64,
                                        int device = -1);
  std::size_t builds() const { return builds_; }

 private:
  using Entry = std::pair<std::string, std::shared_future<std::shared_ptr<const GemmInputs>>>;
  std::size_t capacity_;
  std::size_t builds_ = 0;
  std::list<Entry> entries_;  // most recent first
  std::mutex mutex_;
};

}  // namespace moeval::cli
