// element_ratios shows exactly what the gate saw: as many elements above 1 as the Verdict counts
// violations, and its largest value is the Verdict's max ratio, in both tiers.
#include <gtest/gtest.h>

#include <algorithm>

#include "moeval/reference/gemm_reference.h"
#include "moeval/tolerance/compare.h"
#include "simulated_kernel.h"

namespace moeval {
namespace {

class ElementRatios : public ::testing::TestWithParam<Tier> {};

TEST_P(ElementRatios, AgreeWithTheVerdict) {
  MoeProblem p;
  p.kind = ProblemKind::gemm2;
  p.experts = 4;
  p.tokens = 8;
  p.topk = 2;
  p.hidden = 64;
  p.inter = 256;
  p.tier = GetParam();
  const GemmCase c = build_gemm_case(p);
  const auto ref = reference::reference_gemm(c);
  const GemmCase bug = testing::with_neighbour_scale(c, local_expert(c.problem, c.routing.topk_ids[0]), 0, 3);
  for (const GemmCase* kernel_case : {&c, &bug}) {
    const std::vector<std::uint16_t> out = testing::simulate_gemm(*kernel_case);
    const reference::Matrix16 observed{out, ref.rows, ref.cols, ref.dtype};
    const tolerance::Verdict v = tolerance::compare(p.tier, observed, ref);
    const std::vector<double> r = tolerance::element_ratios(p.tier, observed, ref);
    ASSERT_EQ(r.size(), out.size());
    EXPECT_EQ(std::count_if(r.begin(), r.end(), [](double x) { return x > 1.0; }), v.violations);
    // The injected bug must trip the gate, or the agreement above would compare 0 with 0 (exact-tier
    // scales take few values, so a neighbour's scale can equal the column's own for some seeds).
    if (kernel_case == &bug) {
      EXPECT_GT(v.violations, 0) << "the neighbour-scale bug did not change any element; pick another column";
    } else {
      EXPECT_EQ(v.violations, 0);
    }
    if (p.tier == Tier::bounded) {
      EXPECT_EQ(*std::max_element(r.begin(), r.end()), v.max_ratio);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, ElementRatios, ::testing::Values(Tier::exact, Tier::bounded),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

}  // namespace
}  // namespace moeval
