// Runs one case through a kernel under test and judges it: poisoned guarded output, two runs
// (bitwise determinism), the tier's comparator against the CPU reference, guard canaries and
// unchanged inputs. Everything ends in one Verdict with its hooks filled in.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/reference/reference_output.h"
#include "moeval/testbed/kernel_under_test.h"
#include "moeval/tolerance/verdict.h"

namespace moeval::testbed {

struct CaseResult {
  std::string kernel;
  std::string case_name;
  int device = 0;
  tolerance::Verdict verdict;
  std::vector<std::string> memory_errors;  // guard overruns and modified inputs, by buffer name
  // Broken calling conventions: the kernel left another device current than the caller's.
  std::vector<std::string> contract_errors;
  std::vector<std::uint16_t> output;       // the first run's output bits (for cross-device checks)

  bool pass() const { return verdict.pass() && memory_errors.empty() && contract_errors.empty(); }
  // One line: kernel, case, device, the verdict summary and any memory error.
  std::string summary() const;
};

// The judged run shared by every stage: `launch` writes [ref.rows, ref.cols] 16-bit outputs into
// a poisoned guarded buffer on `device`, twice (bitwise determinism); the first output is compared
// with `ref` under `tier`; the guards of `inputs` and the output and the inputs' contents are checked.
// Each launch is made under ForeignCurrentDevice (devices.h): another device than `device` is
// current whenever two exist, and the kernel must hand the caller's current device back; `launch`
// must not set the device itself (kernel_under_test.h). The runner then synchronizes `device`.
CaseResult run_judged(std::string kernel, std::string case_name, int device, Tier tier,
                      const reference::ReferenceOutput& ref, const std::function<void(GuardedBuffer&)>& launch,
                      std::vector<const GuardedBuffer*> inputs);

// Runs `gemm_case` on `device`. `reference` may be passed when several kernels or devices share
// it; it is used only when it was computed under the kernel's contract (kernel.contract()),
// otherwise the CPU reference is computed here under that contract. Throws what the kernel throws
// for a case it cannot run (call unsupported_reason() first).
CaseResult run_gemm_case(const GemmKernelUnderTest& kernel, const GemmCase& gemm_case, int device,
                         const reference::ReferenceOutput* reference = nullptr);

}  // namespace moeval::testbed
