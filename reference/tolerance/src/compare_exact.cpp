#include <cmath>
#include <limits>

#include "compare_inputs.h"
#include "element_rules.h"
#include "moeval/tolerance/compare.h"
#include "normwise.h"

namespace moeval::tolerance {
bool exact_same_value(double got, double want, std::uint16_t got_bits, std::uint16_t want_bits) {
  if (got_bits == want_bits) return true;
  if (std::isnan(got) && std::isnan(want)) return true;  // payloads may differ
  return got == 0.0 && want == 0.0;                      // +0 == −0
}

Verdict compare_exact(const reference::Matrix16& observed, const reference::ReferenceOutput& ref) {
  check_compare_inputs("compare_exact", observed, ref);
  Verdict v;
  v.tier = Tier::exact;
  v.contract = ref.contract;
  v.rows = ref.rows;
  v.cols = ref.cols;
  NormwiseAccumulator norm;
  double worst_error = -1.0;
  for (std::int64_t r = 0; r < ref.rows; ++r) {
    for (std::int64_t c = 0; c < ref.cols; ++c) {
      const std::size_t i = ref.index(r, c);
      const std::uint16_t got_bits = observed.at(r, c);
      const double got = to_double(got_bits, ref.dtype);
      const double want = to_double(ref.y16[i], ref.dtype);
      count_nonfinite(got, ref.y[i], v);
      norm.add(got, ref.y[i]);
      if (exact_same_value(got, want, got_bits, ref.y16[i])) continue;
      ++v.violations;
      const double error = std::isfinite(got - want) ? std::fabs(got - want) : std::numeric_limits<double>::infinity();
      const ElementReport e{r, c, got, ref.y[i], want, 0.0, std::numeric_limits<double>::infinity(), got_bits, ref.y16[i]};
      if (!v.first_violation) v.first_violation = e;
      if (error > worst_error) {
        worst_error = error;
        v.worst = e;
      }
    }
  }
  v.max_ratio = v.violations > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  v.normwise = norm.value();
  v.numerics_pass = v.violations == 0;
  return v;
}

}  // namespace moeval::tolerance
