// Test oracle: the reference semantics written as the plainest loops in long double, sharing
// nothing with the Eigen implementation (no RoutedRows, no decode table, no chunking).
#pragma once

#include <cstdint>
#include <vector>

#include "moeval/fixtures/cases.h"

namespace moeval::testing {

struct NaiveGemm {
  std::vector<long double> y;     // [T][N]
  std::vector<long double> s;     // [T][N]
  std::vector<long double> abs;   // Σ_k |t_k|: scale of the fp64 summation error
};

// out[t, n] = Σ_k a[t / divisor, k]·W16[e][k][n] (× weight) for the flat routed rows of `routing`.
NaiveGemm naive_gemm(const MoeProblem& problem, const Routing& routing, const std::vector<std::uint16_t>& a,
                     std::int64_t a_row_divisor, const QuantizedWeights& w, bool mul_topk_weights);

}  // namespace moeval::testing
