#include "moeval/tolerance/bound.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace moeval::tolerance {

double element_bound(double y_ref, double s, std::int64_t k, DType out, const BoundModel& model,
                     const reference::RoundingModel& rounding) {
  if (out != DType::f16 && out != DType::bf16) {
    throw std::invalid_argument("element_bound: output dtype code " + std::to_string(int(out)) +
                                " is not supported; allowed: fp16, bf16");
  }
  if (k < 1) throw std::invalid_argument("element_bound: reduction length K = " + std::to_string(k) + " must be >= 1");
  const double u_out = unit_roundoff(out);
  // Half the smallest subnormal: below the normal range the output spacing stops shrinking, so a
  // correct rounding can be off by up to eta/2 whatever |y| is (fl(x) = x(1 + delta) + eta').
  const double half_subnormal = std::ldexp(1.0, out == DType::f16 ? -25 : -134);
  // Inexact products add at most one more term's worth of variance (bound.h).
  const double terms = rounding.exact_products ? double(k) : double(k) + 1.0;
  const double accumulation = model.c * model.u_acc * std::sqrt(terms) * s;
  if (rounding.output_roundings == 1) {
    return u_out * std::fabs(y_ref) + half_subnormal + (1.0 + u_out) * accumulation;
  }
  if (rounding.output_roundings != 2) {
    throw std::invalid_argument("element_bound: " + std::to_string(rounding.output_roundings) +
                                " output roundings are not modelled; allowed: 1, 2");
  }
  // Two roundings with an fp32 multiply between them (derivation in bound.h).
  const double q = u_out + model.u_acc + u_out * model.u_acc;
  const double output_term = u_out + q * (1.0 + u_out);
  return output_term * std::fabs(y_ref) + (2.0 + q) * half_subnormal + (1.0 + output_term) * accumulation;
}

}  // namespace moeval::tolerance
