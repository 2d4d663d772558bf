#include "simulated_kernel.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "moeval/fixtures/quantize.h"

namespace moeval::testing {

namespace {

// The 16-bit value of x rounded toward zero: the nearest-even result, stepped one ulp toward zero
// when it rounded away (magnitude bits − 1 keeps the sign in both fp16 and bf16).
std::uint16_t truncate_to_bits(double x, DType act) {
  const std::uint16_t nearest = round_to_bits(x, act);
  if (std::fabs(to_double(nearest, act)) > std::fabs(x)) return std::uint16_t(nearest - 1);
  return nearest;
}

}  // namespace

std::vector<std::uint16_t> simulate_gemm(const GemmCase& c, Accumulator accumulator, OutputRounding rounding) {
  const DType act = c.problem.scheme.act;
  const QuantizedWeights& w = c.w;
  const std::int64_t rows = c.routing.tokens * c.routing.topk;
  // Every 16-bit value is exact in fp32; decode once, as a kernel's dequant would.
  std::vector<float> wf(w.dequant.size());
  for (std::size_t i = 0; i < wf.size(); ++i) wf[i] = float(to_double(w.dequant[i], act));
  std::vector<std::uint16_t> out(std::size_t(rows * w.n), round_to_bits(0.0, act));
  std::vector<float> a(std::size_t(w.k));
  for (std::int64_t t = 0; t < rows; ++t) {
    const std::int32_t e = local_expert(c.problem, c.routing.topk_ids[std::size_t(t)]);
    if (e < 0) continue;
    const std::int64_t a_row = t / c.a_row_divisor;
    for (std::int64_t k = 0; k < w.k; ++k) a[std::size_t(k)] = float(to_double(c.a[std::size_t(a_row * w.k + k)], act));
    for (std::int64_t n = 0; n < w.n; ++n) {
      float sum = 0.0f;
      for (std::int64_t i = 0; i < w.k; ++i) {
        const std::int64_t k = accumulator == Accumulator::fp32_reverse ? w.k - 1 - i : i;
        // A product of two 16-bit values is exact in fp32 (at most 22 significant bits).
        sum += a[std::size_t(k)] * wf[w.code_index(e, k, n)];
        if (accumulator == Accumulator::rounded16) sum = float(round_to(double(sum), act));
      }
      if (c.mul_topk_weights) sum *= c.routing.topk_weights[std::size_t(t)];
      out[std::size_t(t * w.n + n)] =
          rounding == OutputRounding::toward_zero ? truncate_to_bits(double(sum), act) : round_to_bits(double(sum), act);
    }
  }
  return out;
}

GemmCase with_neighbour_scale(GemmCase c, std::int32_t expert, std::int64_t group, std::int64_t column) {
  QuantizedWeights& w = c.w;
  if (column + 1 >= w.n) throw std::invalid_argument("with_neighbour_scale: column has no right neighbour");
  w.scales[w.group_index(expert, group, column)] = w.scales[w.group_index(expert, group, column + 1)];
  dequantize(w);
  return c;
}

GemmCase with_code_off_by_one(GemmCase c, std::int32_t expert, std::int64_t k, std::int64_t column) {
  QuantizedWeights& w = c.w;
  std::uint8_t& code = w.codes[w.code_index(expert, k, column)];
  code = code < max_code(w.scheme.type) ? std::uint8_t(code + 1) : std::uint8_t(code - 1);
  dequantize(w);
  return c;
}

void drop_row(std::vector<std::uint16_t>& out, std::int64_t cols, std::int64_t row) {
  std::fill_n(out.begin() + row * cols, cols, std::uint16_t(0));
}

}  // namespace moeval::testing
