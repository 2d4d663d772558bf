#include <cmath>
#include <limits>

#include "compare_inputs.h"
#include "element_rules.h"
#include "moeval/tolerance/compare.h"
#include "normwise.h"

namespace moeval::tolerance {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

double bounded_element_ratio(double value, double y, double y16_value, double bound) {
  if (std::isnan(value) || std::isnan(y)) return std::isnan(value) && std::isnan(y) ? 0.0 : kInf;
  if (std::isinf(value)) return (value == y || value == y16_value) ? 0.0 : kInf;
  if (std::isinf(y)) return kInf;
  const double error = std::fabs(value - y);
  if (bound > 0.0) return error / bound;
  return error == 0.0 ? 0.0 : kInf;
}

Verdict compare_bounded(const reference::Matrix16& observed, const reference::ReferenceOutput& ref,
                        const BoundModel& model) {
  check_compare_inputs("compare_bounded", observed, ref);
  Verdict v;
  v.tier = Tier::bounded;
  v.contract = ref.contract;
  v.rows = ref.rows;
  v.cols = ref.cols;
  NormwiseAccumulator norm;
  for (std::int64_t r = 0; r < ref.rows; ++r) {
    for (std::int64_t c = 0; c < ref.cols; ++c) {
      const std::size_t i = ref.index(r, c);
      const std::uint16_t got_bits = observed.at(r, c);
      const double got = to_double(got_bits, ref.dtype);
      const double y = ref.y[i];
      count_nonfinite(got, y, v);
      norm.add(got, y);
      const double bound = std::isfinite(y) ? element_bound(y, ref.s[i], ref.reduction_length, ref.dtype, model, ref.rounding) : 0.0;
      const double y_rounded = to_double(ref.y16[i], ref.dtype);
      const double ratio = bounded_element_ratio(got, y, y_rounded, bound);
      const ElementReport e{r, c, got, y, y_rounded, bound, ratio, got_bits, ref.y16[i]};
      if (ratio > 1.0) {
        ++v.violations;
        if (!v.first_violation) v.first_violation = e;
      }
      if (!v.worst || ratio > v.max_ratio) {
        v.max_ratio = ratio;
        v.worst = e;
      }
    }
  }
  v.normwise = norm.value();
  v.numerics_pass = v.violations == 0;
  return v;
}

}  // namespace moeval::tolerance
