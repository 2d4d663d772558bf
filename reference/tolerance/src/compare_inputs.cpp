#include "compare_inputs.h"

#include <stdexcept>
#include <string>

namespace moeval::tolerance {
namespace {

std::string shape(std::int64_t rows, std::int64_t cols) {
  return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
}

}  // namespace

void check_compare_inputs(const char* comparator, const reference::Matrix16& observed,
                          const reference::ReferenceOutput& ref) {
  const std::string where(comparator);
  observed.validate(where + ": kernel output");
  if (observed.rows != ref.rows || observed.cols != ref.cols) {
    throw std::invalid_argument(where + ": kernel output has shape " + shape(observed.rows, observed.cols) +
                                " but the reference has " + shape(ref.rows, ref.cols));
  }
  if (observed.dtype != ref.dtype) {
    throw std::invalid_argument(where + ": kernel output is " + std::string(to_string(observed.dtype)) +
                                " but the reference output is " + std::string(to_string(ref.dtype)));
  }
  const std::size_t n = std::size_t(ref.rows * ref.cols);
  if (ref.y.size() != n || ref.y16.size() != n || ref.s.size() != n || ref.reduction_length < 1) {
    throw std::invalid_argument(where + ": reference of shape " + shape(ref.rows, ref.cols) + " holds " +
                                std::to_string(ref.y.size()) + " y, " + std::to_string(ref.y16.size()) + " y16, " +
                                std::to_string(ref.s.size()) + " S values and reduction length " +
                                std::to_string(ref.reduction_length) + "; it needs " + std::to_string(n) +
                                " of each and a length >= 1");
  }
}

}  // namespace moeval::tolerance
