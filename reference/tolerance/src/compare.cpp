#include "moeval/tolerance/compare.h"

#include <cmath>
#include <limits>

#include "compare_inputs.h"
#include "element_rules.h"

namespace moeval::tolerance {

Verdict compare(Tier tier, const reference::Matrix16& observed, const reference::ReferenceOutput& ref,
                const BoundModel& model) {
  return tier == Tier::exact ? compare_exact(observed, ref) : compare_bounded(observed, ref, model);
}

std::vector<double> element_ratios(Tier tier, const reference::Matrix16& observed, const reference::ReferenceOutput& ref,
                                   const BoundModel& model) {
  check_compare_inputs("element_ratios", observed, ref);
  std::vector<double> out(ref.y.size(), 0.0);
  for (std::int64_t r = 0; r < ref.rows; ++r) {
    for (std::int64_t c = 0; c < ref.cols; ++c) {
      const std::size_t i = ref.index(r, c);
      const std::uint16_t got_bits = observed.at(r, c);
      const double got = to_double(got_bits, ref.dtype);
      const double want16 = to_double(ref.y16[i], ref.dtype);
      if (tier == Tier::exact) {
        out[i] = exact_same_value(got, want16, got_bits, ref.y16[i]) ? 0.0 : std::numeric_limits<double>::infinity();
      } else {
        const double y = ref.y[i];
        const double bound =
            std::isfinite(y) ? element_bound(y, ref.s[i], ref.reduction_length, ref.dtype, model, ref.rounding) : 0.0;
        out[i] = bounded_element_ratio(got, y, want16, bound);
      }
    }
  }
  return out;
}

}  // namespace moeval::tolerance
