#include "moeval/tolerance/bound.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace moeval::tolerance {

double element_bound(double y_ref, double s, std::int64_t k, DType out, const BoundModel& model) {
  if (out != DType::f16 && out != DType::bf16) {
    throw std::invalid_argument("element_bound: output dtype code " + std::to_string(int(out)) +
                                " is not supported; allowed: fp16, bf16");
  }
  if (k < 1) throw std::invalid_argument("element_bound: reduction length K = " + std::to_string(k) + " must be >= 1");
  const double u_out = unit_roundoff(out);
  // Half the smallest subnormal: below the normal range the output spacing stops shrinking, so a
  // correct rounding can be off by up to eta/2 whatever |y| is (fl(x) = x(1 + delta) + eta').
  const double half_subnormal = std::ldexp(1.0, out == DType::f16 ? -25 : -134);
  return u_out * std::fabs(y_ref) + half_subnormal +
         (1.0 + u_out) * model.c * model.u_acc * std::sqrt(double(k)) * s;
}

}  // namespace moeval::tolerance
