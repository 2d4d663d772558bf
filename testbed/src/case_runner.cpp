#include "moeval/testbed/case_runner.h"

#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/devices.h"
#include "moeval/tolerance/compare.h"

namespace moeval::testbed {

std::string CaseResult::summary() const {
  std::string s = kernel + " " + case_name + " device " + std::to_string(device) + ": " + verdict.summary();
  for (const auto& e : memory_errors) s += "\n  memory: " + e;
  for (const auto& e : contract_errors) s += "\n  device: " + e;
  return s;
}

CaseResult run_judged(std::string kernel, std::string case_name, int device, Tier tier,
                      const reference::ReferenceOutput& ref, const std::function<void(GuardedBuffer&)>& launch,
                      std::vector<const GuardedBuffer*> inputs) {
  CaseResult result;
  result.kernel = std::move(kernel);
  result.case_name = std::move(case_name);
  result.device = device;

  // The kernel is called the way a serving process on another rank calls it: its data on `device`,
  // a different device current. Only after it returns does the runner make `device` current, to
  // wait for it (an asynchronous fault surfaces there).
  const auto call = [&](GuardedBuffer& out) {
    {
      ForeignCurrentDevice caller(device);
      launch(out);
      if (auto e = caller.check_restored(result.kernel); !e.empty()) result.contract_errors.push_back(e);
      // A launch that went to the current device instead of the data's faults there.
      synchronize_device(caller.current(), result.kernel + " (device " + std::to_string(caller.current()) +
                                               " current, data on device " + std::to_string(device) + ")");
    }
    synchronize_device(device, result.kernel + " on device " + std::to_string(device));
  };
  GuardedBuffer out(result.kernel + ".out", device, std::size_t(ref.rows * ref.cols) * sizeof(std::uint16_t),
                    sizeof(std::uint16_t));
  call(out);
  result.output = out.download<std::uint16_t>();
  out.poison();
  call(out);
  const auto second = out.download<std::uint16_t>();

  result.verdict = tolerance::compare(tier, reference::Matrix16{result.output, ref.rows, ref.cols, ref.dtype}, ref);
  result.verdict.deterministic = second == result.output;
  inputs.push_back(&out);
  result.memory_errors = memory_errors(inputs);
  result.verdict.canaries_intact = result.memory_errors.empty();
  return result;
}

CaseResult run_gemm_case(const GemmKernelUnderTest& kernel, const GemmCase& gemm_case, int device,
                         const reference::ReferenceOutput* reference) {
  std::optional<reference::ReferenceOutput> own_reference;
  const reference::NumericsContract contract = kernel.contract();
  if (reference == nullptr || reference->contract != contract) {
    reference = &own_reference.emplace(reference::reference_gemm(gemm_case, contract));
  }
  auto prepared = kernel.prepare(gemm_case, device);
  return run_judged(kernel.name(), gemm_case.problem.name(), device, gemm_case.problem.tier, *reference,
                    [&](GuardedBuffer& out) { prepared->run(out); }, prepared->buffers());
}

}  // namespace moeval::testbed
