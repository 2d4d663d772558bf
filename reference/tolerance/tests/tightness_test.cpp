// The other half of the comparator's power: the gates must be TIGHT, not just sound. A bound made
// looser (√K → K is 85× at K = 7168, a larger c, a coarser u_out) or an exact tier with any slack
// would still pass every correct kernel and the formula tests that pin it — so these tests assert,
// on the simulated kernel of power_test at realistic K, that
//   - a correct fp32 kernel uses most of the bounded tier's bound (its output rounding alone
//     reaches ≥ 3/4 of it), so a bound ≥ 4/3 looser fails;
//   - the accumulation term is within a small factor of the fp32 error it models: the largest
//     observed error of a real fp32 running sum reaches a measured fraction of that term (an 85×
//     looser term fails);
//   - a bug that is at most one ulp — truncating instead of rounding to nearest — fails both tiers,
//     and the exact tier rejects a single element one ulp off (zero slack).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "moeval/reference/gemm_reference.h"
#include "moeval/tolerance/bound.h"
#include "moeval/tolerance/compare.h"
#include "simulated_kernel.h"

namespace moeval {
namespace {

using reference::Matrix16;
using reference::ReferenceOutput;
using testing::Accumulator;
using testing::OutputRounding;

// DeepSeek-V3 GEMM1 reduction length, 32 routed rows × 64 columns, int4 g128.
MoeProblem realistic_problem(DType act, Tier tier = Tier::bounded, std::int64_t k = 7168) {
  MoeProblem p;
  p.kind = ProblemKind::gemm1;
  p.experts = 4;
  p.tokens = 16;
  p.topk = 2;
  p.hidden = k;
  p.inter = 32;
  p.scheme.type = WeightType::uint4b8;
  p.scheme.group_size = 128;
  p.scheme.act = act;
  p.tier = tier;
  p.seed = 20261130;
  return p;
}

class Tightness : public ::testing::TestWithParam<DType> {};

// Output rounding is half an ulp at most and, over 2048 outputs, comes close to it somewhere: a
// correct kernel's max ratio is near 1 (0.90–0.99 on the H200 calibration). A floor of 3/4
// fails any bound at least 4/3 too loose.
TEST_P(Tightness, CorrectKernelUsesMostOfTheBoundAtK7168) {
  const GemmCase c = build_gemm_case(realistic_problem(GetParam()));
  const ReferenceOutput ref = reference::reference_gemm(c);
  const auto v = tolerance::compare_bounded(Matrix16{testing::simulate_gemm(c), ref.rows, ref.cols, ref.dtype}, ref);
  std::printf("correct kernel, %s K=7168: max ratio %.3f\n", std::string(to_string(GetParam())).c_str(), v.max_ratio);
  EXPECT_TRUE(v.pass()) << v.summary();
  EXPECT_GE(v.max_ratio, 0.75) << "the bound is far looser than a correct kernel needs: " << v.summary();
}

// The accumulation term c·u_acc·√K·S against what it models: the error of an fp32 running sum
// (before any 16-bit rounding) of the same products, in both orders. The Higham–Mary estimate puts
// the largest of 2048 such errors near 0.1 of the term at c = 12; the floor 0.02 leaves a 5×
// margin below that, while the term with K in place of √K (85× larger here) gives ≈ 0.001.
TEST_P(Tightness, AccumulationTermIsWithinASmallFactorOfTheFp32Error) {
  const DType act = GetParam();
  const GemmCase c = build_gemm_case(realistic_problem(act));
  const QuantizedWeights& w = c.w;
  const std::int64_t rows = c.routing.tokens * c.routing.topk;
  double worst = 0.0;
  for (std::int64_t t = 0; t < rows; ++t) {
    const std::int32_t e = local_expert(c.problem, c.routing.topk_ids[std::size_t(t)]);
    const std::int64_t a_row = t / c.a_row_divisor;
    for (std::int64_t n = 0; n < w.n; ++n) {
      double exact = 0.0, s2 = 0.0;
      float forward = 0.0f, backward = 0.0f;
      for (std::int64_t i = 0; i < w.k; ++i) {
        const auto term = [&](std::int64_t k) {
          return to_double(c.a[std::size_t(a_row * w.k + k)], act) * to_double(w.dequant[w.code_index(e, k, n)], act);
        };
        const double ti = term(i);  // exact in fp64 and in fp32 (two 16-bit operands)
        exact += ti;
        s2 += ti * ti;
        forward += float(ti);
        backward += float(term(w.k - 1 - i));
      }
      // The accumulation term alone: y_ref = 0 leaves it plus η/2, which is 2^-25 at most.
      const double term = tolerance::element_bound(0.0, std::sqrt(s2), w.k, act) - std::ldexp(1.0, act == DType::f16 ? -25 : -134);
      ASSERT_GT(term, 0.0);
      const double err = std::max(std::fabs(double(forward) - exact), std::fabs(double(backward) - exact));
      EXPECT_LE(err, term) << "fp32 accumulation error outside the bound at row " << t << " col " << n;
      worst = std::max(worst, err / term);
    }
  }
  std::printf("%s K=7168: largest fp32 accumulation error / accumulation term = %.4f\n",
              std::string(to_string(act)).c_str(), worst);
  EXPECT_GE(worst, 0.02) << "the accumulation term is far looser than the fp32 error it models";
}

// Truncation instead of round-to-nearest moves outputs by at most one ulp (up to 2·u_out
// relative): the bounded tier must fail it at K = 7168 — a bound 2× too loose would not.
TEST_P(Tightness, BoundedTierCatchesTruncatedOutputRounding) {
  const GemmCase c = build_gemm_case(realistic_problem(GetParam()));
  const ReferenceOutput ref = reference::reference_gemm(c);
  const auto out = testing::simulate_gemm(c, Accumulator::fp32, OutputRounding::toward_zero);
  const auto v = tolerance::compare_bounded(Matrix16{out, ref.rows, ref.cols, ref.dtype}, ref);
  std::printf("truncated rounding, %s K=7168: max ratio %.3f, %lld violations\n", std::string(to_string(GetParam())).c_str(),
              v.max_ratio, static_cast<long long>(v.violations));
  EXPECT_FALSE(v.pass()) << v.summary();
}

// Exact tier, zero slack: the same one-ulp bug fails it on exact data (every mismatch is exactly
// one ulp), and so does a single element moved by one ulp either way.
TEST_P(Tightness, ExactTierAdmitsNoSlackOfOneUlp) {
  const DType act = GetParam();
  const GemmCase c = build_gemm_case(realistic_problem(act, Tier::exact, 2048));
  const ReferenceOutput ref = reference::reference_gemm(c);
  const auto correct = testing::simulate_gemm(c);
  ASSERT_TRUE(tolerance::compare_exact(Matrix16{correct, ref.rows, ref.cols, act}, ref).pass());

  const auto truncated = testing::simulate_gemm(c, Accumulator::fp32, OutputRounding::toward_zero);
  std::int64_t one_ulp = 0, other = 0;
  for (std::size_t i = 0; i < truncated.size(); ++i) {
    const int d = std::abs(int(truncated[i]) - int(correct[i]));
    one_ulp += d == 1;
    other += d > 1;
  }
  ASSERT_GT(one_ulp, 0) << "the exact data never needed rounding; the case cannot show a one-ulp slack";
  ASSERT_EQ(other, 0);
  const auto v = tolerance::compare_exact(Matrix16{truncated, ref.rows, ref.cols, act}, ref);
  EXPECT_FALSE(v.pass()) << "one-ulp (truncation) errors in " << one_ulp << " elements passed the exact tier";
  EXPECT_EQ(v.violations, one_ulp);

  for (int step : {+1, -1}) {
    auto nudged = correct;
    const std::size_t at = nudged.size() / 2 + 3;
    nudged[at] = std::uint16_t(nudged[at] + step);  // one ulp in magnitude (sign unchanged)
    const auto one = tolerance::compare_exact(Matrix16{nudged, ref.rows, ref.cols, act}, ref);
    EXPECT_FALSE(one.pass()) << "an element one ulp off passed the exact tier";
    EXPECT_EQ(one.violations, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Tightness, ::testing::Values(DType::bf16, DType::f16),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(to_string(i.param)); });

}  // namespace
}  // namespace moeval
