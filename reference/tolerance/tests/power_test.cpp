// The comparator's power (docs/tolerance.md, "Bounded tier"): a correct fp32 kernel passes the
// bounded tier with margin, and each bug class of the calibration — a wrong (group, column)
// scale, a code off by one, 16-bit accumulation, a dropped output row — fails it, at K = 7168 in
// bf16 (where a worst-case bound misses them) as well as at small K. Each bug is injected into a
// copy of a simulated kernel path (simulated_kernel.h), never into the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

#include "moeval/reference/gemm_reference.h"
#include "moeval/tolerance/compare.h"
#include "simulated_kernel.h"

namespace moeval {
namespace {

using reference::Matrix16;
using reference::ReferenceOutput;
using testing::Accumulator;

// A GEMM1 over routed rows: E = 4 experts, 16 tokens × top-2 = 32 routed rows, N = 2I = 64.
MoeProblem gemm1_problem(DType act, std::int64_t k, QuantScheme scheme = {}) {
  MoeProblem p;
  p.kind = ProblemKind::gemm1;
  p.experts = 4;
  p.tokens = 16;
  p.topk = 2;
  p.hidden = k;
  p.inter = 32;
  p.scheme = scheme;
  p.scheme.act = act;
  p.seed = 20261129;
  return p;
}

tolerance::Verdict check(const std::vector<std::uint16_t>& out, const ReferenceOutput& ref) {
  return tolerance::compare_bounded(Matrix16{out, ref.rows, ref.cols, ref.dtype}, ref);
}

void print(const std::string& label, const tolerance::Verdict& v) {
  std::printf("  %-46s max ratio %10.3g  violations %5lld  normwise %.3g\n", label.c_str(), v.max_ratio,
              static_cast<long long>(v.violations), v.normwise);
}

struct CorrectCase {
  QuantScheme scheme;
  ProblemKind kind;
};

// Every scheme at K = 256 and 2048, the first three also at K = 7168.
void expect_correct_kernel_passes(DType act) {
  const CorrectCase cases[] = {
      {{WeightType::uint4b8, 128}, ProblemKind::gemm1},
      {{WeightType::uint8b128, kChannelwise}, ProblemKind::gemm1},
      {{WeightType::uint8, 32}, ProblemKind::gemm2},
      {{WeightType::uint4, 64}, ProblemKind::gemm1},
      {{WeightType::uint4b8, 32, true}, ProblemKind::gemm1},
      {{WeightType::uint4b8, 128}, ProblemKind::gemm2},
  };
  double max_seen = 0.0;
  for (std::int64_t k : {256, 2048, 7168}) {
    for (std::size_t i = 0; i < std::size(cases) && (k < 7168 || i < 3); ++i) {
      const CorrectCase& cc = cases[i];
      MoeProblem p = gemm1_problem(act, k, cc.scheme);
      p.kind = cc.kind;
      if (cc.kind == ProblemKind::gemm2) {  // K = I, N = H: keep N at 64
        p.inter = k;
        p.hidden = 64;
      }
      const GemmCase c = build_gemm_case(p);
      const ReferenceOutput ref = reference::reference_gemm(c);
      const tolerance::Verdict v = check(testing::simulate_gemm(c), ref);
      print(p.scheme.name() + " " + std::string(to_string(p.kind)) + " K=" + std::to_string(k), v);
      EXPECT_TRUE(v.pass()) << p.name() << ": " << v.summary();
      max_seen = std::max(max_seen, v.max_ratio);
    }
  }
  std::printf("correct fp32 kernel, %s: max ratio over all cases %.3f\n", std::string(to_string(act)).c_str(), max_seen);
}

TEST(ComparatorPower, CorrectFp32KernelPassesRandomFp16Cases) { expect_correct_kernel_passes(DType::f16); }
TEST(ComparatorPower, CorrectFp32KernelPassesRandomBf16Cases) { expect_correct_kernel_passes(DType::bf16); }

// The four bugs on one case; every one must fail the bounded tier.
void expect_every_bug_caught(DType act, std::int64_t k) {
  const GemmCase c = build_gemm_case(gemm1_problem(act, k));
  const ReferenceOutput ref = reference::reference_gemm(c);
  std::printf("%s K=%lld (correct: %s)\n", std::string(to_string(act)).c_str(), static_cast<long long>(k),
              check(testing::simulate_gemm(c), ref).summary().c_str());
  // The bug sites follow a fixed rule: the expert of routed row 0, the middle group / row, column 5.
  const std::int32_t expert = local_expert(c.problem, c.routing.topk_ids[0]);
  const std::int64_t column = 5;

  const GemmCase scale_bug = testing::with_neighbour_scale(c, expert, c.w.groups() / 2, column);
  const tolerance::Verdict a = check(testing::simulate_gemm(scale_bug), ref);
  print("(a) scale of (group, column) from its neighbour", a);
  EXPECT_FALSE(a.pass()) << a.summary();
  ASSERT_TRUE(a.worst.has_value());
  EXPECT_EQ(a.worst->col, column);

  const GemmCase code_bug = testing::with_code_off_by_one(c, expert, k / 2, column);
  const tolerance::Verdict b = check(testing::simulate_gemm(code_bug), ref);
  print("(b) one code off by one", b);
  EXPECT_FALSE(b.pass()) << b.summary();
  ASSERT_TRUE(b.worst.has_value());
  EXPECT_EQ(b.worst->col, column);

  const tolerance::Verdict acc = check(testing::simulate_gemm(c, Accumulator::rounded16), ref);
  print("(c) partial sums accumulated in 16 bits", acc);
  EXPECT_FALSE(acc.pass()) << acc.summary();

  std::vector<std::uint16_t> dropped = testing::simulate_gemm(c);
  testing::drop_row(dropped, ref.cols, 0);
  const tolerance::Verdict d = check(dropped, ref);
  print("(d) output row 0 dropped (zeroed)", d);
  EXPECT_FALSE(d.pass()) << d.summary();
  ASSERT_TRUE(d.worst.has_value());
  EXPECT_EQ(d.worst->row, 0);
}

TEST(ComparatorPower, CatchesEveryBugAtK7168Bf16) { expect_every_bug_caught(DType::bf16, 7168); }
TEST(ComparatorPower, CatchesEveryBugAtSmallKBf16) { expect_every_bug_caught(DType::bf16, 256); }
TEST(ComparatorPower, CatchesEveryBugAtSmallKFp16) { expect_every_bug_caught(DType::f16, 256); }
TEST(ComparatorPower, CatchesEveryBugAtK7168Fp16) { expect_every_bug_caught(DType::f16, 7168); }

// Exact tier: integer data make every order of fp32 summation exact, so a correct kernel equals
// the reference bit for bit, whatever its order; any change of value is a mismatch.
TEST(ComparatorPower, ExactTierIsExactAndCatchesOneCodeAndADroppedRow) {
  for (DType act : {DType::f16, DType::bf16}) {
    for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
      MoeProblem p = gemm1_problem(act, 512);
      p.kind = kind;
      p.inter = 128;  // GEMM2: K = I = 128, N = H = 512
      p.tier = Tier::exact;
      const GemmCase c = build_gemm_case(p);
      const ReferenceOutput ref = reference::reference_gemm(c);
      SCOPED_TRACE(p.name());
      for (Accumulator order : {Accumulator::fp32, Accumulator::fp32_reverse}) {
        const tolerance::Verdict v = tolerance::compare_exact(Matrix16{testing::simulate_gemm(c, order), ref.rows, ref.cols, act}, ref);
        EXPECT_TRUE(v.pass()) << v.summary();
        EXPECT_EQ(v.violations, 0);
      }
      const std::int32_t expert = local_expert(c.problem, c.routing.topk_ids[0]);
      const GemmCase code_bug = testing::with_code_off_by_one(c, expert, c.w.k / 2, 5);
      const tolerance::Verdict b = tolerance::compare_exact(Matrix16{testing::simulate_gemm(code_bug), ref.rows, ref.cols, act}, ref);
      EXPECT_FALSE(b.pass()) << b.summary();
      ASSERT_TRUE(b.first_violation.has_value());
      EXPECT_EQ(b.first_violation->col, 5);
      std::vector<std::uint16_t> dropped = testing::simulate_gemm(c);
      testing::drop_row(dropped, ref.cols, 3);
      const tolerance::Verdict d = tolerance::compare_exact(Matrix16{dropped, ref.rows, ref.cols, act}, ref);
      EXPECT_FALSE(d.pass()) << d.summary();
      ASSERT_TRUE(d.first_violation.has_value());
      EXPECT_EQ(d.first_violation->row, 3);
    }
  }
}

}  // namespace
}  // namespace moeval
