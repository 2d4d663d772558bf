// A read-only row-major matrix of 16-bit floats (raw bits tagged with their DType).
//
// Every stage of the reference consumes one: the activations of a case, or the kernel's own
// intermediate when a later stage is checked on its own (docs/tolerance.md: GEMM2's reference consumes the
// kernel's intermediate).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "moeval/fixtures/half.h"

namespace moeval::reference {

struct Matrix16 {
  std::span<const std::uint16_t> bits;  // [rows][cols]
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  DType dtype = DType::bf16;

  std::uint16_t at(std::int64_t r, std::int64_t c) const { return bits[std::size_t(r * cols + c)]; }
  // Throws std::invalid_argument naming `what` when bits.size() != rows·cols or a size is negative.
  void validate(std::string_view what) const;
};

}  // namespace moeval::reference
