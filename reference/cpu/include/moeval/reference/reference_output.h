// What every reference stage returns per output element: the fp64 value, its 16-bit rounding and
// the statistic S of the bounded tier (docs/tolerance.md): y = Σ_k t_k over `reduction_length` terms t_k,
// S = sqrt(Σ_k t_k²). The comparator's bound for the element is built from y, S and the length.
#pragma once

#include <cstdint>
#include <vector>

#include "moeval/fixtures/half.h"
#include "moeval/reference/matrix16.h"
#include "moeval/reference/numerics_contract.h"

namespace moeval::reference {

struct ReferenceOutput {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  DType dtype = DType::bf16;           // output dtype: y16 is y rounded once to it
  std::int64_t reduction_length = 0;   // number of terms per element (K of the bound)
  std::vector<double> y;               // [rows][cols] fp64 value (exact up to fp64 rounding)
  std::vector<std::uint16_t> y16;      // [rows][cols] round_to_bits(y, dtype)
  std::vector<double> s;               // [rows][cols] S = sqrt(Σ_k t_k²), fp64
  // The contract this output models and what it means for the bound: the comparator reads both,
  // so a reference and its bound can never model two different kernels.
  NumericsContract contract{};
  RoundingModel rounding{};

  ReferenceOutput() = default;
  ReferenceOutput(std::int64_t rows_, std::int64_t cols_, DType dtype_, std::int64_t reduction_length_);

  std::size_t index(std::int64_t r, std::int64_t c) const { return std::size_t(r * cols + c); }
  // Fills y16 from y (the single output rounding every stage ends with).
  void round_outputs();
  // The 16-bit outputs as the input of the next stage.
  Matrix16 as_matrix16() const { return Matrix16{y16, rows, cols, dtype}; }
};

}  // namespace moeval::reference
