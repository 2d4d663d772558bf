// Private: statistics both comparators keep next to the gate.
#pragma once

#include <cmath>
#include <limits>

#include "moeval/tolerance/verdict.h"

namespace moeval::tolerance {

// ‖value − reference‖_F / ‖reference‖_F over the pairs where both are finite (0 when both norms are 0).
class NormwiseAccumulator {
 public:
  void add(double value, double reference) {
    if (!std::isfinite(value) || !std::isfinite(reference)) return;
    diff2_ += (value - reference) * (value - reference);
    ref2_ += reference * reference;
  }
  double value() const {
    if (ref2_ == 0.0) return diff2_ == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
    return std::sqrt(diff2_ / ref2_);
  }

 private:
  double diff2_ = 0.0;
  double ref2_ = 0.0;
};

inline void count_nonfinite(double value, double reference, Verdict& v) {
  if (std::isnan(value)) ++v.observed_nan;
  if (std::isinf(value)) ++v.observed_inf;
  if (!std::isfinite(reference)) ++v.reference_nonfinite;
}

}  // namespace moeval::tolerance
