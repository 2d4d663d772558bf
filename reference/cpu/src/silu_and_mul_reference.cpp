#include "moeval/reference/silu_and_mul_reference.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "decode_table.h"

namespace moeval::reference {

ReferenceOutput reference_silu_and_mul(const Matrix16& x) {
  x.validate("reference_silu_and_mul: input");
  if (x.cols % 2 != 0) {
    throw std::invalid_argument("reference_silu_and_mul: input has " + std::to_string(x.cols) +
                                " columns; it needs 2·I (gate columns, then up columns)");
  }
  const std::int64_t inter = x.cols / 2;
  ReferenceOutput out(x.rows, inter, x.dtype, 1);
  const double* table = decode_table(x.dtype);
  for (std::int64_t t = 0; t < x.rows; ++t) {
    for (std::int64_t j = 0; j < inter; ++j) {
      const double gate = table[x.at(t, j)];
      const double up = table[x.at(t, inter + j)];
      // z / (1 + e^-z): for z << 0, e^-z overflows to inf and the quotient is the correct -0.
      const double y = gate / (1.0 + std::exp(-gate)) * up;
      out.y[out.index(t, j)] = y;
      out.s[out.index(t, j)] = std::fabs(y);
    }
  }
  out.round_outputs();
  return out;
}

}  // namespace moeval::reference
