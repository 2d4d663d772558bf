// The whole layer on Marlin weights: every stage against the reference (GEMM1 and GEMM2 through the
// Marlin kernel), then moe_forward on Marlin weights end to end, which must reproduce the staged
// kernels bit for bit; act-order with and without is_k_full, many experts, EP maps. The golden
// layer cases (act-order included) run on Marlin against their stored GEMM1 outputs.
#include <gtest/gtest.h>

#include "moeval/fixtures/cases.h"
#include "moeval/golden/loader.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/layer_runner.h"
#include "moeval/testbed/marlin_kernel.h"

namespace moeval::testbed {
namespace {

constexpr auto kMarlin = kernels::MoeWeightFormat::marlin;

MoeProblem layer_problem(WeightType type, int group, DType act, std::int64_t experts = 8, std::int64_t tokens = 16,
                         std::int64_t topk = 2, std::int64_t hidden = 256, std::int64_t inter = 128) {
  MoeProblem p;
  p.kind = ProblemKind::layer;
  p.experts = experts;
  p.tokens = tokens;
  p.topk = topk;
  p.hidden = hidden;
  p.inter = inter;
  p.scheme.type = type;
  p.scheme.group_size = group;
  p.scheme.act = act;
  p.tier = Tier::bounded;
  p.seed = 7;
  return p;
}

void expect_layer_passes(const MoeProblem& p, int device = 0) {
  const LayerResult r = run_layer_case(build_layer_case(p), device, nullptr, kMarlin);
  EXPECT_TRUE(r.pass()) << p.name() << "\n" << r.summary();
}

TEST(MarlinLayerGpu, EverySchemeAndDtype) {
  MOEVAL_REQUIRE_GPUS(1);
  for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
    for (int group : {kChannelwise, 32, 128}) {
      for (DType act : {DType::f16, DType::bf16}) expect_layer_passes(layer_problem(type, group, act));
    }
  }
}

TEST(MarlinLayerGpu, ActOrderKFullAndKPart) {
  MOEVAL_REQUIRE_GPUS(1);
  for (WeightType type : {WeightType::uint4b8, WeightType::uint8b128}) {
    for (DType act : {DType::f16, DType::bf16}) {
      for (bool k_full : {true, false}) {
        MoeProblem p = layer_problem(type, 32, act);
        p.scheme.act_order = true;
        p.scheme.is_k_full = k_full;
        expect_layer_passes(p);
      }
    }
  }
}

// One row-parallel rank of 2: w2 holds its half of the global I with the global g_idx and scales.
TEST(MarlinLayerGpu, ActOrderKShardRanks) {
  MOEVAL_REQUIRE_GPUS(1);
  for (std::int64_t rank : {0, 1}) {
    MoeProblem p = layer_problem(WeightType::uint4b8, 32, DType::bf16);
    p.scheme.act_order = true;
    p.scheme.is_k_full = false;
    p.k_shards = 2;
    p.k_shard_rank = rank;
    expect_layer_passes(p);
  }
}

TEST(MarlinLayerGpu, ManyExpertsDecodeShape) {
  MOEVAL_REQUIRE_GPUS(1);
  expect_layer_passes(layer_problem(WeightType::uint4b8, 128, DType::bf16, 256, 4, 8, 512, 128));
  MoeProblem p = layer_problem(WeightType::uint4b8, 32, DType::bf16, 512, 3, 8, 256, 64);
  p.scheme.act_order = true;
  expect_layer_passes(p);
}

TEST(MarlinLayerGpu, ExpertParallelAndEmptyExperts) {
  MOEVAL_REQUIRE_GPUS(1);
  MoeProblem p = layer_problem(WeightType::uint4b8, 32, DType::f16, 16, 24, 4);
  p.expert_map.assign(16, -1);
  for (int e = 0; e < 8; ++e) p.expert_map[std::size_t(2 * e)] = e;  // even experts live here
  expect_layer_passes(p);
  MoeProblem q = layer_problem(WeightType::uint8, 128, DType::bf16, 32, 40, 4);
  q.routing.kind = RoutingKind::empty_experts;
  q.routing.empty_experts = 24;
  expect_layer_passes(q);
}

TEST(MarlinLayerGpu, SingleTokenSingleExpert) {
  MOEVAL_REQUIRE_GPUS(1);
  expect_layer_passes(layer_problem(WeightType::uint4b8, 32, DType::bf16, 1, 1, 1, 64, 32));
}

// Every committed golden layer case both Marlin GEMMs support, act-order ones included (the WNA16
// layer cannot run those), against the stored GEMM1 output.
TEST(MarlinLayerGpu, GoldenLayerCasesStageByStage) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto path = golden::family_path(golden::default_golden_dir(), golden::Family::layer);
  int ran = 0, act_order = 0;
  for (const std::string& name : golden::list_cases(path)) {
    const golden::GoldenLayerCase g = golden::load_layer_case(path, name);
    const std::string why = marlin_unsupported_reason(g.layer.w13) + marlin_unsupported_reason(g.layer.w2);
    if (!why.empty()) {
      std::printf("golden layer case %s not supported by Marlin: %s\n", name.c_str(), why.c_str());
      continue;
    }
    const LayerResult r = run_layer_case(g.layer, 0, &g.expected, kMarlin);
    EXPECT_TRUE(r.pass()) << name << "\n" << r.summary();
    ++ran;
    act_order += g.layer.problem.scheme.act_order ? 1 : 0;
  }
  std::printf("golden layer cases on Marlin: %d run, %d of them act-order\n", ran, act_order);
  EXPECT_GT(ran, 0);
  EXPECT_GT(act_order, 0) << "no act-order layer case ran (the corpus holds some: MarlinGoldenCoverage)";
}

}  // namespace
}  // namespace moeval::testbed
