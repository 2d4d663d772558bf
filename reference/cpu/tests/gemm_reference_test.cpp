// The GEMM reference against a long-double triple loop, both routing forms, and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "moeval/reference/gemm_reference.h"
#include "naive_reference.h"

namespace moeval {
namespace {

using reference::GemmOperands;
using reference::Matrix16;
using reference::ReferenceOutput;
using reference::RoutedRows;

MoeProblem small_problem(ProblemKind kind, DType act, QuantScheme scheme, bool expert_parallel) {
  MoeProblem p;
  p.kind = kind;
  p.experts = 8;
  p.tokens = 5;
  p.topk = 3;
  p.hidden = 256;
  p.inter = 128;
  p.scheme = scheme;
  p.scheme.act = act;
  p.seed = 11;
  if (expert_parallel) p.expert_map = {-1, 0, -1, 1, -1, -1, 2, -1};  // 3 of 8 experts local
  return p;
}

// Every element: y within the fp64 summation error of the long-double sum (γ_K·Σ|t|, with
// γ_K = (K + 2)·2^-53 covering K additions and the weight multiply), S to 1e-12, y16 = round(y).
void expect_matches_naive(const GemmCase& c, const ReferenceOutput& ref) {
  const testing::NaiveGemm naive = testing::naive_gemm(c.problem, c.routing, c.a, c.a_row_divisor, c.w, c.mul_topk_weights);
  ASSERT_EQ(ref.rows, c.routing.tokens * c.routing.topk);
  ASSERT_EQ(ref.cols, c.w.n);
  ASSERT_EQ(ref.reduction_length, c.w.k);
  const double gamma = double(c.w.k + 2) * std::ldexp(1.0, -53);
  std::int64_t nonzero = 0;
  for (std::size_t i = 0; i < ref.y.size(); ++i) {
    const double want = double(naive.y[i]);
    ASSERT_LE(std::fabs(ref.y[i] - want), gamma * double(naive.abs[i])) << "element " << i;
    ASSERT_NEAR(ref.s[i], double(naive.s[i]), 1e-12 * double(naive.s[i])) << "element " << i;
    ASSERT_EQ(ref.y16[i], round_to_bits(want, ref.dtype)) << "element " << i;
    nonzero += ref.y[i] != 0.0;
  }
  EXPECT_GT(nonzero, 0) << "a test on zeros proves nothing";
}

TEST(GemmReference, MatchesLongDoubleTripleLoopOverSchemesDtypesAndExpertParallelism) {
  const QuantScheme schemes[] = {{WeightType::uint4b8, 128}, {WeightType::uint4, 32}, {WeightType::uint8b128, 64, true}};
  for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
    for (DType act : {DType::f16, DType::bf16}) {
      for (const QuantScheme& scheme : schemes) {
        for (bool ep : {false, true}) {
          const GemmCase c = build_gemm_case(small_problem(kind, act, scheme, ep));
          SCOPED_TRACE(c.problem.name());
          expect_matches_naive(c, reference::reference_gemm(c));
        }
      }
    }
  }
}

TEST(GemmReference, ExactTierOutputIsTheExactSum) {
  MoeProblem p = small_problem(ProblemKind::gemm2, DType::bf16, {WeightType::uint4, 64}, false);
  p.tier = Tier::exact;
  const GemmCase c = build_gemm_case(p);
  const ReferenceOutput ref = reference::reference_gemm(c);
  const testing::NaiveGemm naive = testing::naive_gemm(c.problem, c.routing, c.a, c.a_row_divisor, c.w, true);
  for (std::size_t i = 0; i < ref.y.size(); ++i) ASSERT_EQ(ref.y[i], double(naive.y[i])) << "element " << i;
}

TEST(GemmReference, RowsOfNonLocalExpertsAreZero) {
  const GemmCase c = build_gemm_case(small_problem(ProblemKind::gemm1, DType::bf16, {}, true));
  const ReferenceOutput ref = reference::reference_gemm(c);
  std::int64_t zero_rows = 0;
  for (std::int64_t t = 0; t < ref.rows; ++t) {
    if (local_expert(c.problem, c.routing.topk_ids[std::size_t(t)]) >= 0) continue;
    ++zero_rows;
    for (std::int64_t n = 0; n < ref.cols; ++n) {
      ASSERT_EQ(ref.y[ref.index(t, n)], 0.0);
      ASSERT_EQ(ref.s[ref.index(t, n)], 0.0);
      ASSERT_EQ(ref.y16[ref.index(t, n)], 0u);
    }
  }
  EXPECT_GT(zero_rows, 0) << "the routing should reach a non-local expert";
}

// moe_align_block_size, written the obvious way: experts in order, flat indices ascending within
// an expert, each expert padded to a multiple of the block with the sentinel T; expert_ids hold
// local ids (-1 for experts of another rank), as the kernels receive them.
struct Aligned {
  std::vector<std::int32_t> sorted_token_ids;
  std::vector<std::int32_t> expert_ids;
  std::int64_t padded = 0;
};

Aligned align(const MoeProblem& p, const Routing& r, std::int64_t block) {
  const std::int32_t t_rows = std::int32_t(r.topk_ids.size());
  Aligned a;
  for (std::int32_t e = 0; e < p.experts; ++e) {
    std::vector<std::int32_t> mine;
    for (std::int32_t t = 0; t < t_rows; ++t) {
      if (r.topk_ids[std::size_t(t)] == e) mine.push_back(t);
    }
    while (mine.size() % std::size_t(block) != 0) mine.push_back(t_rows);
    for (std::size_t b = 0; b < mine.size(); b += std::size_t(block)) a.expert_ids.push_back(local_expert(p, e));
    a.sorted_token_ids.insert(a.sorted_token_ids.end(), mine.begin(), mine.end());
  }
  a.padded = std::int64_t(a.sorted_token_ids.size());
  // Worst-case allocation tail, as the kernels see it: more sentinel entries past the padded count.
  a.sorted_token_ids.resize(a.sorted_token_ids.size() + std::size_t(block) * 2, t_rows);
  a.expert_ids.resize(a.expert_ids.size() + 2, 0);
  return a;
}

TEST(GemmReference, AlignedFormGivesBitIdenticalOutput) {
  for (bool ep : {false, true}) {
    for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
      const GemmCase c = build_gemm_case(small_problem(kind, DType::f16, {}, ep));
      SCOPED_TRACE(c.problem.name());
      const std::int64_t block = 4;
      const Aligned al = align(c.problem, c.routing, block);
      const RoutedRows routed = RoutedRows::from_aligned(
          {al.sorted_token_ids, al.expert_ids, al.padded, block, std::int64_t(c.routing.topk_ids.size())},
          c.routing.topk_weights, c.a_row_divisor);
      const Matrix16 a{c.a, c.shape.m, c.shape.k, c.problem.scheme.act};
      const ReferenceOutput aligned = reference::reference_gemm(GemmOperands{a, c.w, routed, c.mul_topk_weights});
      const ReferenceOutput flat = reference::reference_gemm(c);
      EXPECT_EQ(aligned.y, flat.y);
      EXPECT_EQ(aligned.s, flat.s);
      EXPECT_EQ(aligned.y16, flat.y16);
    }
  }
}

TEST(GemmReference, NoTokensGiveAnEmptyOutput) {
  MoeProblem p = small_problem(ProblemKind::gemm1, DType::bf16, {}, false);
  p.tokens = 0;
  const ReferenceOutput ref = reference::reference_gemm(build_gemm_case(p));
  EXPECT_EQ(ref.rows, 0);
  EXPECT_TRUE(ref.y.empty());
}

template <typename F>
void expect_invalid(F&& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(GemmReference, BadInputGivesOneClearError) {
  const GemmCase c = build_gemm_case(small_problem(ProblemKind::gemm1, DType::bf16, {}, false));
  const RoutedRows routed = RoutedRows::from_topk(c.routing, c.problem, c.a_row_divisor);
  const Matrix16 a{c.a, c.shape.m, c.shape.k, DType::bf16};

  const Matrix16 short_k{std::span(c.a).first(std::size_t(c.shape.m * 128)), c.shape.m, 128, DType::bf16};
  expect_invalid([&] { reference::reference_gemm(GemmOperands{short_k, c.w, routed, false}); }, "K = 128");
  const Matrix16 fp16{c.a, c.shape.m, c.shape.k, DType::f16};
  expect_invalid([&] { reference::reference_gemm(GemmOperands{fp16, c.w, routed, false}); }, "fp16");
  const Matrix16 wrong_size{std::span(c.a).first(10), c.shape.m, c.shape.k, DType::bf16};
  expect_invalid([&] { reference::reference_gemm(GemmOperands{wrong_size, c.w, routed, false}); }, "holds 10 values");
  const RoutedRows no_divisor = RoutedRows::from_topk(c.routing, c.problem, 1);  // reads rows past M
  expect_invalid([&] { reference::reference_gemm(GemmOperands{a, c.w, no_divisor, false}); }, "a_row_divisor");
  QuantizedWeights few = c.w;
  few.experts = 2;
  few.dequant.resize(std::size_t(2 * few.k * few.n));
  expect_invalid([&] { reference::reference_gemm(GemmOperands{a, few, routed, false}); }, "hold 2 experts");

  Routing bad = c.routing;
  bad.topk_ids[4] = 8;
  expect_invalid([&] { RoutedRows::from_topk(bad, c.problem, 3); }, "topk_ids[4] = 8");
  bad = c.routing;
  bad.topk_weights.pop_back();
  expect_invalid([&] { RoutedRows::from_topk(bad, c.problem, 3); }, "tokens·topk = 15");
  expect_invalid([&] { RoutedRows::from_topk(c.routing, c.problem, 0); }, "a_row_divisor = 0");

  const Aligned al = align(c.problem, c.routing, 4);
  const std::int64_t t_rows = std::int64_t(c.routing.topk_ids.size());
  std::vector<std::int32_t> twice = al.sorted_token_ids;
  twice[1] = twice[0];
  expect_invalid([&] { RoutedRows::from_aligned({twice, al.expert_ids, al.padded, 4, t_rows}, c.routing.topk_weights, 3); },
                 "appears twice");
  std::vector<std::int32_t> past = al.sorted_token_ids;
  past[0] = std::int32_t(t_rows + 1);
  expect_invalid([&] { RoutedRows::from_aligned({past, al.expert_ids, al.padded, 4, t_rows}, c.routing.topk_weights, 3); },
                 "outside [0, T = 15]");
  expect_invalid(
      [&] { RoutedRows::from_aligned({al.sorted_token_ids, al.expert_ids, al.padded + 2, 4, t_rows}, c.routing.topk_weights, 3); },
      "multiple of block_size");
  expect_invalid(
      [&] { RoutedRows::from_aligned({al.sorted_token_ids, al.expert_ids, al.padded, 0, t_rows}, c.routing.topk_weights, 3); },
      "block_size = 0");
}

}  // namespace
}  // namespace moeval
