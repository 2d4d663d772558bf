#include "naive_reference.h"

#include <cmath>

namespace moeval::testing {

NaiveGemm naive_gemm(const MoeProblem& problem, const Routing& routing, const std::vector<std::uint16_t>& a,
                     std::int64_t a_row_divisor, const QuantizedWeights& w, bool mul_topk_weights) {
  const DType act = w.scheme.act;
  const std::int64_t rows = routing.tokens * routing.topk;
  NaiveGemm out{std::vector<long double>(std::size_t(rows * w.n), 0.0L),
                std::vector<long double>(std::size_t(rows * w.n), 0.0L),
                std::vector<long double>(std::size_t(rows * w.n), 0.0L)};
  for (std::int64_t t = 0; t < rows; ++t) {
    const std::int32_t e = local_expert(problem, routing.topk_ids[std::size_t(t)]);
    if (e < 0) continue;
    const long double weight = mul_topk_weights ? routing.topk_weights[std::size_t(t)] : 1.0L;
    for (std::int64_t n = 0; n < w.n; ++n) {
      long double sum = 0.0L, squares = 0.0L, abs = 0.0L;
      for (std::int64_t k = 0; k < w.k; ++k) {
        const long double term = weight * to_double(a[std::size_t((t / a_row_divisor) * w.k + k)], act) *
                                 to_double(w.dequant[w.code_index(e, k, n)], act);
        sum += term;
        squares += term * term;
        abs += std::fabs(term);
      }
      out.y[std::size_t(t * w.n + n)] = sum;
      out.s[std::size_t(t * w.n + n)] = std::sqrt(squares);
      out.abs[std::size_t(t * w.n + n)] = abs;
    }
  }
  return out;
}

}  // namespace moeval::testing
