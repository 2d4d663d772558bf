// The comparators on hand-made outputs: gates, reported indices, non-finite policy, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "moeval/tolerance/compare.h"

namespace moeval::tolerance {
namespace {

using reference::Matrix16;
using reference::ReferenceOutput;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A 2 × 3 reference in `dtype` with the given y and S, reduction length 16.
ReferenceOutput make_reference(const std::vector<double>& y, const std::vector<double>& s, DType dtype) {
  ReferenceOutput r(2, 3, dtype, 16);
  r.y = y;
  r.s = s;
  r.round_outputs();
  return r;
}

Matrix16 view(const std::vector<std::uint16_t>& bits, DType dtype) { return Matrix16{bits, 2, 3, dtype}; }

std::vector<std::uint16_t> bits_of(const std::vector<double>& v, DType dtype) {
  std::vector<std::uint16_t> b;
  for (double x : v) b.push_back(round_to_bits(x, dtype));
  return b;
}

TEST(CompareExact, EqualOutputsPassAndTheFirstAndWorstMismatchAreReported) {
  const ReferenceOutput ref = make_reference({1, 2, 3, 4, 5, 6}, std::vector<double>(6, 1.0), DType::bf16);
  const std::vector<std::uint16_t> same = ref.y16;
  const Verdict ok = compare_exact(view(same, DType::bf16), ref);
  EXPECT_TRUE(ok.pass());
  EXPECT_EQ(ok.violations, 0);
  EXPECT_EQ(ok.max_ratio, 0.0);

  const std::vector<std::uint16_t> wrong = bits_of({1, 2.015625, 3, 4, 5, 9}, DType::bf16);  // (0,1) one ulp (2^-6), (1,2) by 3
  const Verdict bad = compare_exact(view(wrong, DType::bf16), ref);
  EXPECT_FALSE(bad.pass());
  EXPECT_EQ(bad.violations, 2);
  ASSERT_TRUE(bad.first_violation && bad.worst);
  EXPECT_EQ(bad.first_violation->row, 0);
  EXPECT_EQ(bad.first_violation->col, 1);
  EXPECT_EQ(bad.worst->row, 1);
  EXPECT_EQ(bad.worst->col, 2);
  EXPECT_EQ(bad.worst->value, 9.0);
  EXPECT_EQ(bad.worst->reference, 6.0);
  EXPECT_NE(bad.summary().find("FAIL exact [2 x 3]: 2 mismatches; first (0, 1)"), std::string::npos) << bad.summary();
}

TEST(CompareExact, TheSummaryWantsTheReferencesOwnRoundingNotItsFp64Value) {
  // y = 1.001 rounds to 1.0 (0x3f80) in bf16; an output of 1.0078125 (0x3f81) is one ulp from
  // that rounding. The exact tier compares patterns, so the line must show 1 and both patterns;
  // the fp64 value comes after, labelled as such.
  const ReferenceOutput ref = make_reference({1.001, 2, 3, 4, 5, 6}, std::vector<double>(6, 1.0), DType::bf16);
  std::vector<std::uint16_t> got = ref.y16;
  got[0] = 0x3f81;
  const Verdict v = compare_exact(view(got, DType::bf16), ref);
  ASSERT_TRUE(v.first_violation);
  EXPECT_EQ(v.first_violation->reference_rounded, 1.0);
  EXPECT_EQ(v.first_violation->reference, 1.001);
  EXPECT_NE(v.summary().find("first (0, 0): got 1.0078125 (0x3f81) want 1 (0x3f80), fp64 1.001"), std::string::npos)
      << v.summary();
}

TEST(CompareExact, SignedZerosAndNaNPayloadsAreEqual) {
  const double nan = std::nan("");
  const ReferenceOutput ref = make_reference({0.0, nan, 1, 1, 1, 1}, std::vector<double>(6, 0.0), DType::f16);
  std::vector<std::uint16_t> got = ref.y16;
  got[0] = 0x8000;  // −0
  got[1] = 0x7E01;  // a NaN with another payload
  EXPECT_TRUE(compare_exact(view(got, DType::f16), ref).pass());
  got[1] = 0x7C00;  // +Inf is not NaN
  EXPECT_FALSE(compare_exact(view(got, DType::f16), ref).pass());
}

TEST(CompareBounded, GateIsTheElementBound) {
  // Element (0,0): y = 1, S = 0 → bound 2^-8 in bf16. The next bf16 value up, 1 + 2^-7 = 1.0078125,
  // is two bounds away: ratio 2.
  const ReferenceOutput ref = make_reference({1, 2, 3, 4, 5, 6}, std::vector<double>(6, 0.0), DType::bf16);
  std::vector<std::uint16_t> got = ref.y16;
  EXPECT_TRUE(compare_bounded(view(got, DType::bf16), ref).pass());
  got[0] = round_to_bits(1.0078125, DType::bf16);
  const Verdict v = compare_bounded(view(got, DType::bf16), ref);
  EXPECT_FALSE(v.pass());
  EXPECT_EQ(v.violations, 1);
  ASSERT_TRUE(v.worst);
  EXPECT_EQ(v.worst->bound, 1.0 / 256.0);
  EXPECT_DOUBLE_EQ(v.worst->ratio, 2.0);
  EXPECT_DOUBLE_EQ(v.max_ratio, 2.0);
  EXPECT_GT(v.normwise, 0.0);
}

TEST(CompareBounded, AccumulationTermWidensTheBoundWithS) {
  // y = 0 with S = 2^20 and K = 16: bound = (1 + 2^-8)·12·2^-24·4·2^20 = 3·(1 + 2^-8).
  const ReferenceOutput ref = make_reference({0, 0, 0, 0, 0, 0}, std::vector<double>(6, 0x1p20), DType::bf16);
  std::vector<std::uint16_t> got = ref.y16;
  got[4] = round_to_bits(3.0, DType::bf16);
  EXPECT_TRUE(compare_bounded(view(got, DType::bf16), ref).pass());
  got[4] = round_to_bits(3.03125, DType::bf16);
  const Verdict v = compare_bounded(view(got, DType::bf16), ref);
  EXPECT_FALSE(v.pass());
  EXPECT_EQ(v.worst->row, 1);
  EXPECT_EQ(v.worst->col, 1);
}

TEST(CompareBounded, NonFiniteValuesPassOnlyWhereTheReferenceHasThem) {
  const double nan = std::nan("");
  // y: NaN, +Inf, a finite value that overflows fp16 (y16 = +Inf), and three finite ones.
  const ReferenceOutput ref = make_reference({nan, kInf, 70000.0, 1, 1, 1}, std::vector<double>(6, 1.0), DType::f16);
  std::vector<std::uint16_t> got = ref.y16;  // NaN, +Inf, +Inf, 1, 1, 1
  Verdict v = compare_bounded(view(got, DType::f16), ref);
  EXPECT_TRUE(v.pass()) << v.summary();
  EXPECT_EQ(v.observed_nan, 1);
  EXPECT_EQ(v.observed_inf, 2);
  EXPECT_EQ(v.reference_nonfinite, 2);

  got[0] = round_to_bits(1.0, DType::f16);  // finite where the reference is NaN
  EXPECT_FALSE(compare_bounded(view(got, DType::f16), ref).pass());
  got = ref.y16;
  got[1] = round_to_bits(-kInf, DType::f16);  // wrong-signed Inf
  EXPECT_FALSE(compare_bounded(view(got, DType::f16), ref).pass());
  got = ref.y16;
  got[3] = round_to_bits(nan, DType::f16);  // NaN where the reference is finite
  v = compare_bounded(view(got, DType::f16), ref);
  EXPECT_FALSE(v.pass());
  EXPECT_EQ(v.worst->row, 1);
  EXPECT_EQ(v.worst->col, 0);
  EXPECT_EQ(v.max_ratio, kInf);
}

TEST(Verdict, HooksOnlyFailWhenCheckedAndFailed) {
  const ReferenceOutput ref = make_reference({1, 2, 3, 4, 5, 6}, std::vector<double>(6, 0.0), DType::bf16);
  Verdict v = compare_bounded(view(ref.y16, DType::bf16), ref);
  EXPECT_TRUE(v.pass());
  EXPECT_NE(v.summary().find("canaries not checked; determinism not checked"), std::string::npos) << v.summary();
  v.canaries_intact = true;
  v.deterministic = false;
  EXPECT_FALSE(v.pass());
  EXPECT_NE(v.summary().find("FAIL"), std::string::npos);
  EXPECT_NE(v.summary().find("canaries ok; determinism FAILED"), std::string::npos) << v.summary();
}

TEST(Compare, ShapeDtypeAndReferenceMismatchesThrow) {
  const ReferenceOutput ref = make_reference({1, 2, 3, 4, 5, 6}, std::vector<double>(6, 0.0), DType::bf16);
  const std::vector<std::uint16_t> got = ref.y16;
  EXPECT_THROW(compare_bounded(Matrix16{got, 3, 2, DType::bf16}, ref), std::invalid_argument);
  EXPECT_THROW(compare_exact(Matrix16{got, 2, 3, DType::f16}, ref), std::invalid_argument);
  EXPECT_THROW(compare_exact(Matrix16{std::span(got).first(5), 2, 3, DType::bf16}, ref), std::invalid_argument);
  ReferenceOutput broken = ref;
  broken.s.pop_back();
  EXPECT_THROW(compare_bounded(view(got, DType::bf16), broken), std::invalid_argument);
  try {
    compare(Tier::bounded, Matrix16{got, 3, 2, DType::bf16}, ref);
    ADD_FAILURE() << "a shape mismatch must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("shape [3, 2] but the reference has [2, 3]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace moeval::tolerance
