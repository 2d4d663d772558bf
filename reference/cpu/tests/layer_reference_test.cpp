// The layer reference: every stage against a long-double chain with the documented rounding
// points, stage entry points on a foreign intermediate, and the elementwise stages by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "moeval/reference/combine_reference.h"
#include "moeval/reference/layer_reference.h"
#include "moeval/reference/silu_and_mul_reference.h"
#include "naive_reference.h"

namespace moeval {
namespace {

using reference::Matrix16;
using reference::ReferenceOutput;

MoeProblem layer_problem(DType act, bool expert_parallel) {
  MoeProblem p;
  p.kind = ProblemKind::layer;
  p.experts = 6;
  p.tokens = 7;
  p.topk = 2;
  p.hidden = 128;
  p.inter = 64;
  p.scheme = {WeightType::uint4b8, 32};
  p.scheme.act = act;
  p.seed = 3;
  if (expert_parallel) p.expert_map = {0, -1, 1, 2, -1, 3};
  return p;
}

std::vector<std::uint16_t> round_all(const std::vector<long double>& y, DType dtype) {
  std::vector<std::uint16_t> bits(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) bits[i] = round_to_bits(double(y[i]), dtype);
  return bits;
}

// The chain of layer_reference.h's rounding points, written independently.
struct NaiveLayer {
  std::vector<std::uint16_t> gemm1, act, gemm2, out;
};

NaiveLayer naive_layer(const LayerCase& c) {
  const MoeProblem& p = c.problem;
  const DType dt = p.scheme.act;
  const std::int64_t t_rows = p.tokens * p.topk;
  NaiveLayer n;
  n.gemm1 = round_all(testing::naive_gemm(p, c.routing, c.x, p.topk, c.w13, false).y, dt);
  n.act.resize(std::size_t(t_rows * p.inter));
  for (std::int64_t t = 0; t < t_rows; ++t) {
    for (std::int64_t j = 0; j < p.inter; ++j) {
      const long double g = to_double(n.gemm1[std::size_t(t * 2 * p.inter + j)], dt);
      const long double u = to_double(n.gemm1[std::size_t(t * 2 * p.inter + p.inter + j)], dt);
      n.act[std::size_t(t * p.inter + j)] = round_to_bits(double(g / (1.0L + std::exp(-g)) * u), dt);
    }
  }
  n.gemm2 = round_all(testing::naive_gemm(p, c.routing, n.act, 1, c.w2, true).y, dt);
  n.out.resize(std::size_t(p.tokens * p.hidden));
  for (std::int64_t m = 0; m < p.tokens; ++m) {
    for (std::int64_t h = 0; h < p.hidden; ++h) {
      long double sum = 0.0L;
      for (std::int64_t j = 0; j < p.topk; ++j) sum += to_double(n.gemm2[std::size_t((m * p.topk + j) * p.hidden + h)], dt);
      n.out[std::size_t(m * p.hidden + h)] = round_to_bits(double(sum), dt);
    }
  }
  return n;
}

TEST(LayerReference, EveryStageMatchesTheLongDoubleChainBitForBit) {
  for (DType act : {DType::f16, DType::bf16}) {
    for (bool ep : {false, true}) {
      const LayerCase c = build_layer_case(layer_problem(act, ep));
      SCOPED_TRACE(c.problem.name());
      const reference::LayerReference ref = reference::layer_reference(c);
      const NaiveLayer naive = naive_layer(c);
      EXPECT_EQ(ref.gemm1.y16, naive.gemm1);
      EXPECT_EQ(ref.act.y16, naive.act);
      EXPECT_EQ(ref.gemm2.y16, naive.gemm2);
      EXPECT_EQ(ref.out.y16, naive.out);
      EXPECT_EQ(ref.out.rows, c.problem.tokens);
      EXPECT_EQ(ref.out.cols, c.problem.hidden);
      EXPECT_EQ(ref.gemm1.reduction_length, c.problem.hidden);
      EXPECT_EQ(ref.act.reduction_length, 1);
      EXPECT_EQ(ref.gemm2.reduction_length, c.problem.inter);
      EXPECT_EQ(ref.out.reduction_length, c.problem.topk);
      EXPECT_NE(std::count(ref.out.y16.begin(), ref.out.y16.end(), std::uint16_t(0)), std::ptrdiff_t(ref.out.y16.size()));
    }
  }
}

TEST(LayerReference, Gemm2ConsumesAForeignIntermediate) {
  const LayerCase c = build_layer_case(layer_problem(DType::bf16, false));
  const reference::LayerReference ref = reference::layer_reference(c);
  // A "kernel" intermediate one ulp away from the reference's in every element.
  std::vector<std::uint16_t> kernel_act = ref.act.y16;
  for (auto& bits : kernel_act) bits = std::uint16_t(bits ^ 1u);
  const Matrix16 act{kernel_act, ref.act.rows, ref.act.cols, DType::bf16};
  const ReferenceOutput g2 = reference::layer_gemm2(c, act);
  const std::vector<std::uint16_t> want =
      round_all(testing::naive_gemm(c.problem, c.routing, kernel_act, 1, c.w2, true).y, DType::bf16);
  EXPECT_EQ(g2.y16, want);
  EXPECT_NE(g2.y16, ref.gemm2.y16);
}

TEST(LayerReference, WeightsThatDoNotFitTheProblemThrow) {
  LayerCase c = build_layer_case(layer_problem(DType::bf16, false));
  std::swap(c.w13, c.w2);
  try {
    reference::layer_reference(c);
    ADD_FAILURE() << "swapped w13 and w2 must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("w13 is [K = 64][N = 128] but H = 128, I = 64 need [128][128]"),
              std::string::npos)
        << e.what();
  }
}

TEST(SiluAndMulReference, HandValues) {
  const DType dt = DType::f16;
  const double inf = std::numeric_limits<double>::infinity();
  // Row: gates [0, 1, -100, NaN], ups [3, 2, 5, 1].
  const std::vector<std::uint16_t> x = {
      round_to_bits(0.0, dt), round_to_bits(1.0, dt), round_to_bits(-100.0, dt), round_to_bits(std::nan(""), dt),
      round_to_bits(3.0, dt), round_to_bits(2.0, dt), round_to_bits(5.0, dt),    round_to_bits(1.0, dt)};
  const ReferenceOutput r = reference::reference_silu_and_mul(Matrix16{x, 1, 8, dt});
  ASSERT_EQ(r.cols, 4);
  EXPECT_EQ(r.y[0], 0.0);
  EXPECT_DOUBLE_EQ(r.y[1], 2.0 / (1.0 + std::exp(-1.0)));  // silu(1)·2 = 1.4621...
  EXPECT_NEAR(r.y[2], -100.0 * std::exp(-100.0) * 5.0, 1e-50);
  EXPECT_TRUE(std::isnan(r.y[3]));
  EXPECT_EQ(r.s[1], std::fabs(r.y[1]));
  EXPECT_EQ(r.y16[1], round_to_bits(r.y[1], dt));
  EXPECT_NE(r.y[1], inf);
  EXPECT_THROW(reference::reference_silu_and_mul(Matrix16{std::span(x).first(3), 1, 3, dt}), std::invalid_argument);
}

TEST(CombineReference, HandValues) {
  const DType dt = DType::bf16;
  // Two tokens, topk 2, H 2: rows [1, 2], [0.5, -2] | [-1, 4], [1, 4].
  std::vector<std::uint16_t> x;
  for (double v : {1.0, 2.0, 0.5, -2.0, -1.0, 4.0, 1.0, 4.0}) x.push_back(round_to_bits(v, dt));
  const ReferenceOutput r = reference::reference_combine(Matrix16{x, 4, 2, dt}, 2);
  ASSERT_EQ(r.rows, 2);
  EXPECT_EQ(r.y, (std::vector<double>{1.5, 0.0, 0.0, 8.0}));
  EXPECT_EQ(r.s, (std::vector<double>{std::sqrt(1.25), std::sqrt(8.0), std::sqrt(2.0), std::sqrt(32.0)}));
  EXPECT_EQ(r.reduction_length, 2);
  EXPECT_THROW(reference::reference_combine(Matrix16{x, 4, 2, dt}, 3), std::invalid_argument);
  EXPECT_THROW(reference::reference_combine(Matrix16{x, 4, 2, dt}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace moeval
