#include "moeval/reference/combine_reference.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "decode_table.h"

namespace moeval::reference {

ReferenceOutput reference_combine(const Matrix16& x, std::int64_t topk) {
  x.validate("reference_combine: input");
  if (topk < 1 || x.rows % topk != 0) {
    throw std::invalid_argument("reference_combine: input has " + std::to_string(x.rows) +
                                " rows, which is not M·topk for topk = " + std::to_string(topk) +
                                " (topk must be at least 1 and divide the row count)");
  }
  const std::int64_t tokens = x.rows / topk;
  ReferenceOutput out(tokens, x.cols, x.dtype, topk);
  const double* table = decode_table(x.dtype);
  for (std::int64_t m = 0; m < tokens; ++m) {
    for (std::int64_t h = 0; h < x.cols; ++h) {
      double sum = 0.0;
      double squares = 0.0;
      for (std::int64_t j = 0; j < topk; ++j) {
        const double v = table[x.at(m * topk + j, h)];
        sum += v;
        squares += v * v;
      }
      out.y[out.index(m, h)] = sum;
      out.s[out.index(m, h)] = std::sqrt(squares);
    }
  }
  out.round_outputs();
  return out;
}

}  // namespace moeval::reference
