// The outcome of comparing one kernel output with its reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "moeval/fixtures/problem.h"
#include "moeval/reference/numerics_contract.h"

namespace moeval::tolerance {

// One output element as the comparator saw it.
struct ElementReport {
  std::int64_t row = -1;
  std::int64_t col = -1;
  double value = 0.0;        // kernel output, decoded to double
  double reference = 0.0;    // fp64 reference y_ref
  double reference_rounded = 0.0;  // reference_bits decoded: the value the exact tier compares with
  double bound = 0.0;        // allowed |value − reference| (0 in the exact tier)
  double ratio = 0.0;        // |value − reference| / bound (exact tier: 0 when equal, inf when not)
  std::uint16_t value_bits = 0;
  std::uint16_t reference_bits = 0;  // the reference's own 16-bit rounding of `reference`
};

struct Verdict {
  Tier tier = Tier::bounded;
  bool numerics_pass = false;
  std::int64_t rows = 0;
  std::int64_t cols = 0;

  std::int64_t violations = 0;                    // elements outside the bound / not equal
  std::optional<ElementReport> first_violation;   // first in row-major order
  std::optional<ElementReport> worst;             // largest ratio (bounded) / largest |error| (exact)
  double max_ratio = 0.0;                         // bounded tier: the gate is max_ratio <= 1
  double normwise = 0.0;  // ‖value − reference‖_F / ‖reference‖_F over finite pairs; report only

  std::int64_t observed_nan = 0;
  std::int64_t observed_inf = 0;
  std::int64_t reference_nonfinite = 0;

  // The contract the reference and the bound modelled (copied from the ReferenceOutput). With
  // Determinism::reported a run-twice difference is shown but does not fail the case.
  reference::NumericsContract contract{};

  // Filled by the testbed; nullopt means "not checked": summary() says so, and pass() judges only
  // the hooks that were checked (a case is never called canary-clean or deterministic unchecked).
  std::optional<bool> canaries_intact;
  std::optional<bool> deterministic;

  // numerics_pass, and no hook that was checked reported a failure (determinism only when the
  // contract requires it).
  bool pass() const;
  // One line: PASS/FAIL, tier, shape, violations, worst element with its indices, normwise, NaN/Inf,
  // the hooks' status, and the contract when it is not the default.
  std::string summary() const;
};

}  // namespace moeval::tolerance
