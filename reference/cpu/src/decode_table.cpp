#include "decode_table.h"

#include <vector>

namespace moeval::reference {
namespace {

std::vector<double> build(DType dtype) {
  std::vector<double> table(1u << 16);
  for (std::uint32_t bits = 0; bits < table.size(); ++bits) table[bits] = to_double(std::uint16_t(bits), dtype);
  return table;
}

}  // namespace

const double* decode_table(DType dtype) {
  static const std::vector<double> f16 = build(DType::f16);
  static const std::vector<double> bf16 = build(DType::bf16);
  return dtype == DType::f16 ? f16.data() : bf16.data();
}

}  // namespace moeval::reference
