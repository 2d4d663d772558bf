#include "moeval/reference/reference_output.h"

namespace moeval::reference {

ReferenceOutput::ReferenceOutput(std::int64_t rows_, std::int64_t cols_, DType dtype_, std::int64_t reduction_length_)
    : rows(rows_),
      cols(cols_),
      dtype(dtype_),
      reduction_length(reduction_length_),
      y(std::size_t(rows_ * cols_), 0.0),
      y16(std::size_t(rows_ * cols_), 0),
      s(std::size_t(rows_ * cols_), 0.0) {}

void ReferenceOutput::round_outputs() {
  for (std::size_t i = 0; i < y.size(); ++i) y16[i] = round_to_bits(y[i], dtype);
}

}  // namespace moeval::reference
