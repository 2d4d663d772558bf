// K-group attribution against deliberately wrong simulated kernels on the CPU (the tolerance
// tests' simulated kernel, with a bug injected into a copy of the case's weights): a scale of one
// (expert, K-group, column) taken from the next column is named by its expert, column and group,
// with the factor the scale is off by, for every group size, act-order (scattered groups) and
// dtype, in GEMM1 and GEMM2 (routing weights); a correct kernel leaves nothing to attribute; a
// dropped K-range spanning several groups is not pinned on one.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "failure_pattern.h"
#include "k_group_attribution.h"
#include "moeval/reference/gemm_reference.h"
#include "simulated_kernel.h"

namespace moeval::cli {
namespace {

struct Config {
  ProblemKind kind;
  int group;
  bool act_order;
  DType act;
};

std::string config_name(const ::testing::TestParamInfo<Config>& info) {
  const Config& c = info.param;
  return std::string(to_string(c.kind)) + "_g" + std::to_string(c.group) + (c.act_order ? "_actorder_" : "_") +
         std::string(to_string(c.act));
}

GemmCase case_of(const Config& cfg) {
  MoeProblem p;
  p.kind = cfg.kind;
  p.experts = 4;
  p.tokens = 32;
  p.topk = 2;
  p.hidden = 512;
  p.inter = 256;
  p.scheme = {WeightType::uint4b8, cfg.group, cfg.act_order, true, cfg.act};
  p.tier = Tier::bounded;
  p.seed = 11;
  return build_gemm_case(p);
}

// The expert with the most routed rows (so the fit has data), and a column whose right neighbour's
// scale in `group` differs by at least 25 % (so the injected error is well outside the bound).
std::pair<std::int32_t, std::int64_t> target(const GemmCase& c, std::int64_t group) {
  std::vector<int> rows(std::size_t(c.w.experts), 0);
  for (std::int32_t e : c.routing.topk_ids) ++rows[std::size_t(e)];
  const auto e = std::int32_t(std::max_element(rows.begin(), rows.end()) - rows.begin());
  for (std::int64_t n = 37; n + 1 < c.w.n; ++n) {
    const double s = to_double(c.w.scales[c.w.group_index(e, group, n)], c.problem.scheme.act);
    const double t = to_double(c.w.scales[c.w.group_index(e, group, n + 1)], c.problem.scheme.act);
    if (std::fabs(t / s - 1.0) > 0.25) return {e, n};
  }
  return {e, -1};
}

class KGroupAttributionTest : public ::testing::TestWithParam<Config> {};

TEST_P(KGroupAttributionTest, AWrongScaleIsPinnedOnItsExpertColumnAndGroup) {
  const GemmCase c = case_of(GetParam());
  const auto ref = reference::reference_gemm(c);
  const std::int64_t group = 1;
  const auto [expert, column] = target(c, group);
  ASSERT_GE(column, 0) << "no column with a distinct neighbour scale";
  const GemmCase wrong = testing::with_neighbour_scale(c, expert, group, column);
  const auto out = testing::simulate_gemm(wrong);
  const FailurePattern pattern = failure_pattern(out, ref, Tier::bounded, c.routing.topk_ids, c.problem.experts);
  ASSERT_GT(pattern.mismatches, 0) << "the injected bug must fail the check";
  EXPECT_EQ(pattern.json["col_tiles8"]["count"], 1) << pattern.summary;
  EXPECT_EQ(pattern.json["col_tiles8"]["first"][0], column / 8) << pattern.summary;

  const KGroupAttribution a = k_group_attribution(c, out, ref, Tier::bounded);
  ASSERT_FALSE(a.suspects.empty()) << a.summary;
  const KGroupSuspect& s = a.suspects.front();
  EXPECT_EQ(s.expert, expert) << a.summary;
  EXPECT_EQ(s.column, column) << a.summary;
  EXPECT_EQ(s.group, group) << a.summary;
  EXPECT_GE(s.explained, kExplainedEnough) << a.summary;
  const double true_factor = to_double(wrong.w.scales[wrong.w.group_index(expert, group, column)], c.problem.scheme.act) /
                             to_double(c.w.scales[c.w.group_index(expert, group, column)], c.problem.scheme.act);
  EXPECT_NEAR(s.factor, true_factor, 0.02 * true_factor) << a.summary;
  EXPECT_NE(a.summary.find("K-group " + std::to_string(group) + " explains"), std::string::npos) << a.summary;
}

TEST_P(KGroupAttributionTest, ACorrectKernelLeavesNothingToAttribute) {
  const GemmCase c = case_of(GetParam());
  const auto ref = reference::reference_gemm(c);
  const KGroupAttribution a = k_group_attribution(c, testing::simulate_gemm(c), ref, Tier::bounded);
  EXPECT_TRUE(a.suspects.empty()) << a.summary;
}

INSTANTIATE_TEST_SUITE_P(Schemes, KGroupAttributionTest,
                         ::testing::Values(Config{ProblemKind::gemm1, 32, false, DType::bf16},
                                           Config{ProblemKind::gemm1, 128, false, DType::f16},
                                           Config{ProblemKind::gemm2, 64, false, DType::bf16},
                                           Config{ProblemKind::gemm1, 64, true, DType::bf16},
                                           Config{ProblemKind::gemm2, 128, true, DType::f16}),
                         config_name);

// Every column of one expert with a K-range of four groups zeroed (a dropped K tile): the error
// is the sum of four groups' contributions, which no single group explains.
TEST(KGroupAttribution, ADroppedKRangeIsNotPinnedOnOneGroup) {
  GemmCase c = case_of({ProblemKind::gemm1, 32, false, DType::bf16});
  const auto ref = reference::reference_gemm(c);
  GemmCase wrong = c;
  for (std::int64_t k = 64; k < 192; ++k) {
    for (std::int64_t n = 0; n < c.w.n; ++n) wrong.w.dequant[wrong.w.code_index(0, k, n)] = 0;
  }
  const auto out = testing::simulate_gemm(wrong);
  const KGroupAttribution a = k_group_attribution(c, out, ref, Tier::bounded);
  ASSERT_FALSE(a.suspects.empty()) << a.summary;
  for (const KGroupSuspect& s : a.suspects) {
    if (s.rows < kMinRows) continue;
    EXPECT_LT(s.explained, kExplainedEnough) << a.summary;
  }
  EXPECT_NE(a.summary.find("no single K-group explains it"), std::string::npos) << a.summary;
}

TEST(KGroupAttribution, ChannelwiseHasOneGroup) {
  MoeProblem p;
  p.kind = ProblemKind::gemm1;
  p.experts = 2;
  p.tokens = 4;
  p.topk = 1;
  p.hidden = 256;
  p.inter = 128;
  p.scheme = {WeightType::uint4b8, kChannelwise, false, true, DType::bf16};
  const GemmCase c = build_gemm_case(p);
  const auto ref = reference::reference_gemm(c);
  const KGroupAttribution a = k_group_attribution(c, ref.y16, ref, Tier::bounded);
  EXPECT_NE(a.summary.find("one K-group"), std::string::npos) << a.summary;
}

}  // namespace
}  // namespace moeval::cli
