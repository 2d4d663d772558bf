// The committed corpus: every case regenerates identically (the CI check), loads back into the
// fixtures types exactly as the fixtures build it, covers the promised matrix, and stays small.
#include <gtest/gtest.h>

#include <set>

#include "moeval/fixtures/cases.h"
#include "moeval/golden/diff.h"
#include "moeval/golden/generate.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/loader.h"

namespace moeval::golden {
namespace {

class CommittedFamily : public ::testing::TestWithParam<Family> {
 protected:
  std::filesystem::path path() const { return family_path(default_golden_dir(), GetParam()); }
};

std::string family_name(const ::testing::TestParamInfo<Family>& info) { return std::string(to_string(info.param)); }

TEST_P(CommittedFamily, RegeneratesIdentically) {
  const std::vector<Difference> diffs = diff_cases(GoldenReader(path()).read_all(), generate_family(GetParam()));
  for (const Difference& d : diffs) ADD_FAILURE() << format(d);
}

void expect_same_weights(const QuantizedWeights& loaded, const QuantizedWeights& built) {
  EXPECT_EQ(loaded.experts, built.experts);
  EXPECT_EQ(loaded.k, built.k);
  EXPECT_EQ(loaded.n, built.n);
  EXPECT_TRUE(loaded.scheme == built.scheme);
  EXPECT_EQ(loaded.codes, built.codes);
  EXPECT_EQ(loaded.scales, built.scales);
  EXPECT_EQ(loaded.zeros, built.zeros);
  EXPECT_EQ(loaded.g_idx, built.g_idx);
  EXPECT_EQ(loaded.perm, built.perm);
  EXPECT_EQ(loaded.dequant, built.dequant);  // recomputed on load by the fixtures' recipe
}

void expect_same_routing(const Routing& loaded, const Routing& built) {
  EXPECT_EQ(loaded.tokens, built.tokens);
  EXPECT_EQ(loaded.topk, built.topk);
  EXPECT_EQ(loaded.topk_ids, built.topk_ids);
  EXPECT_EQ(loaded.topk_weights, built.topk_weights);
}

void expect_same_output(const reference::ReferenceOutput& loaded, const std::vector<Difference>& diffs) {
  EXPECT_GT(loaded.reduction_length, 0);
  for (const Difference& d : diffs) ADD_FAILURE() << format(d);
}

// Loading gives what the fixtures build for the stored problem, and re-encoding what was loaded
// (packing the layouts again from the loaded logical weights) reproduces the stored case exactly.
TEST_P(CommittedFamily, EveryCaseLoadsBackIntoFixturesTypes) {
  const GoldenReader reader(path());
  ASSERT_FALSE(reader.case_names().empty());
  for (const std::string& name : reader.case_names()) {
    SCOPED_TRACE(name);
    const CaseRecord stored = reader.read_case(name);
    if (GetParam() == Family::layer) {
      const GoldenLayerCase loaded = load_layer_case(path(), name);
      const LayerCase built = build_layer_case(loaded.layer.problem);
      EXPECT_EQ(loaded.layer.problem.name(), name);
      EXPECT_EQ(loaded.layer.x, built.x);
      expect_same_routing(loaded.layer.routing, built.routing);
      expect_same_weights(loaded.layer.w13, built.w13);
      expect_same_weights(loaded.layer.w2, built.w2);
      const auto again = encode_layer_case(loaded.layer, loaded.expected, applicable_layouts(GetParam(), loaded.layer));
      expect_same_output(loaded.expected.out, diff_case(stored, again));
    } else {
      const GoldenGemmCase loaded = load_gemm_case(path(), name);
      const GemmCase built = build_gemm_case(loaded.gemm.problem);
      EXPECT_EQ(loaded.gemm.problem.name(), name);
      EXPECT_EQ(loaded.gemm.a, built.a);
      EXPECT_EQ(loaded.gemm.a_row_divisor, built.a_row_divisor);
      EXPECT_EQ(loaded.gemm.mul_topk_weights, built.mul_topk_weights);
      expect_same_routing(loaded.gemm.routing, built.routing);
      expect_same_weights(loaded.gemm.w, built.w);
      const auto again = encode_gemm_case(loaded.gemm, loaded.expected, applicable_layouts(GetParam(), loaded.gemm));
      expect_same_output(loaded.expected, diff_case(stored, again));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, CommittedFamily, ::testing::ValuesIn(all_families()), family_name);

TEST(GoldenCorpus, CoversTheMatrix) {
  std::set<std::int64_t> experts;
  std::set<std::string> schemes;
  std::set<std::string> layouts_seen;
  bool exact = false, ep = false, empty_experts = false, topk8 = false, k_part = false, k_full = false;
  for (Family f : all_families()) {
    for (const MoeProblem& p : corpus(f)) {
      experts.insert(p.experts);
      schemes.insert(p.scheme.name());
      exact = exact || p.tier == Tier::exact;
      ep = ep || !p.expert_map.empty();
      empty_experts = empty_experts || p.routing.kind == RoutingKind::empty_experts;
      topk8 = topk8 || p.topk == 8;
      k_full = k_full || (p.scheme.act_order && p.scheme.is_k_full);
      k_part = k_part || (p.scheme.act_order && !p.scheme.is_k_full);
      for (Layout l : family_layouts(f)) {
        const GemmShape g = p.kind == ProblemKind::layer ? p.gemm1() : p.gemm();
        if (layout_applies(l, p.scheme, g.k, g.n)) layouts_seen.insert(std::string(to_string(l)));
      }
    }
  }
  for (std::int64_t e : {1, 8, 64, 256, 512}) EXPECT_TRUE(experts.count(e)) << "E = " << e;
  // 4 types × 4 group sizes × 2 dtypes plain, 2 symmetric types × 3 groups × 2 dtypes × is_k_full both ways.
  EXPECT_EQ(schemes.size(), 32u + 24u);
  EXPECT_EQ(layouts_seen, (std::set<std::string>{"wna16", "marlin", "gptq", "awq", "compressed_tensors"}));
  EXPECT_TRUE(exact && ep && empty_experts && topk8 && k_full && k_part);
}

TEST(GoldenCorpus, CommittedDataStaysSmall) {
  std::uintmax_t total = 0;
  for (Family f : all_families()) total += std::filesystem::file_size(family_path(default_golden_dir(), f));
  EXPECT_LT(total, std::uintmax_t(6) << 20) << "the committed corpus must stay a few MB";
}

}  // namespace
}  // namespace moeval::golden
