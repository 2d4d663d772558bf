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

// The weights as a kernel with `recipe` holds them, computed in fp32 as a GPU would (not by the
// fixtures' recipe code the reference uses). Every operand here is exact in fp32: u, z < 2^8,
// s has at most 11 significant bits, so (u − z)·s, z·s and u·s − fl16(z·s) need at most 20.
std::vector<float> simulated_weights(const QuantizedWeights& w, DequantRecipe recipe) {
  const DType act = w.scheme.act;
  std::vector<float> wf(w.dequant.size());
  if (recipe == DequantRecipe::sub_then_mul) {
    // Every 16-bit value is exact in fp32; decode once, as a kernel's dequant would.
    for (std::size_t i = 0; i < wf.size(); ++i) wf[i] = float(to_double(w.dequant[i], act));
    return wf;
  }
  for (std::int64_t e = 0; e < w.experts; ++e) {
    for (std::int64_t k = 0; k < w.k; ++k) {
      const std::int64_t g = w.g_idx[std::size_t(e * w.k + k)];
      for (std::int64_t n = 0; n < w.n; ++n) {
        const float u = float(w.codes[w.code_index(e, k, n)]);
        const float z = float(w.zero_at(e, g, n));
        const float s = float(to_double(w.scales[w.group_index(e, g, n)], act));
        float value = (u - z) * s;
        if (recipe == DequantRecipe::scaled_zero_fma) {
          const float scaled_zero = float(round_to(double(z * s), act));
          value = float(round_to(double(std::fma(u, s, -scaled_zero)), act));
        }
        wf[w.code_index(e, k, n)] = value;
      }
    }
  }
  return wf;
}

}  // namespace

std::vector<std::uint16_t> simulate_gemm(const GemmCase& c, Accumulator accumulator, OutputRounding rounding,
                                         const SimulatedNumerics& numerics) {
  const DType act = c.problem.scheme.act;
  const QuantizedWeights& w = c.w;
  const std::int64_t rows = c.routing.tokens * c.routing.topk;
  const std::vector<float> wf = simulated_weights(w, numerics.dequant);
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
        // A product of two 16-bit values is exact in fp32 (at most 22 significant bits); an fp32
        // weight's is not, and a GPU fuses it into the add (one rounding per step).
        sum = std::fma(a[std::size_t(k)], wf[w.code_index(e, k, n)], sum);
        if (accumulator == Accumulator::rounded16) sum = float(round_to(double(sum), act));
      }
      if (c.mul_topk_weights && numerics.weight_after_rounding) {
        sum = float(round_to(double(sum), act)) * c.routing.topk_weights[std::size_t(t)];
      } else if (c.mul_topk_weights) {
        sum *= c.routing.topk_weights[std::size_t(t)];
      }
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
