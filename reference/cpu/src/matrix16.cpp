#include "moeval/reference/matrix16.h"

#include <stdexcept>
#include <string>

namespace moeval::reference {

void Matrix16::validate(std::string_view what) const {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument(std::string(what) + ": shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
                                "] has a negative size");
  }
  if (std::int64_t(bits.size()) != rows * cols) {
    throw std::invalid_argument(std::string(what) + ": holds " + std::to_string(bits.size()) +
                                " values, but its shape [" + std::to_string(rows) + ", " + std::to_string(cols) +
                                "] needs " + std::to_string(rows * cols));
  }
  if (dtype != DType::f16 && dtype != DType::bf16) {
    throw std::invalid_argument(std::string(what) + ": dtype code " + std::to_string(int(dtype)) +
                                " is not supported; allowed: fp16, bf16");
  }
}

}  // namespace moeval::reference
