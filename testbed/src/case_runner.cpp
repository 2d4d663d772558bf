#include "moeval/testbed/case_runner.h"

#include "moeval/reference/gemm_reference.h"
#include "moeval/tolerance/compare.h"

namespace moeval::testbed {

std::string CaseResult::summary() const {
  std::string s = kernel + " " + case_name + " device " + std::to_string(device) + ": " + verdict.summary();
  for (const auto& e : memory_errors) s += "\n  memory: " + e;
  return s;
}

CaseResult run_gemm_case(const GemmKernelUnderTest& kernel, const GemmCase& gemm_case, int device,
                         const reference::ReferenceOutput* reference) {
  std::optional<reference::ReferenceOutput> own_reference;
  if (reference == nullptr) reference = &own_reference.emplace(reference::reference_gemm(gemm_case));

  CaseResult result;
  result.kernel = kernel.name();
  result.case_name = gemm_case.problem.name();
  result.device = device;

  auto prepared = kernel.prepare(gemm_case, device);
  const std::size_t elements = std::size_t(reference->rows * reference->cols);
  GuardedBuffer out("out", device, elements * sizeof(std::uint16_t));

  prepared->run(out);
  result.output = out.download<std::uint16_t>();
  out.poison();
  prepared->run(out);
  const auto second = out.download<std::uint16_t>();

  const reference::Matrix16 observed{result.output, reference->rows, reference->cols, gemm_case.w.scheme.act};
  result.verdict = tolerance::compare(gemm_case.problem.tier, observed, *reference);
  result.verdict.deterministic = second == result.output;

  for (const GuardedBuffer* b : prepared->buffers()) {
    if (auto e = b->check_guards(); !e.empty()) result.memory_errors.push_back(e);
    if (auto e = b->check_unchanged(); !e.empty()) result.memory_errors.push_back(e);
  }
  if (auto e = out.check_guards(); !e.empty()) result.memory_errors.push_back(e);
  result.verdict.canaries_intact = result.memory_errors.empty();
  return result;
}

}  // namespace moeval::testbed
