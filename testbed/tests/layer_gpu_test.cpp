// The whole layer on the GPU, stage by stage against the reference, then moe_forward end to end.
#include <gtest/gtest.h>

#include "moeval/fixtures/cases.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/layer_runner.h"

namespace moeval::testbed {
namespace {

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
  const LayerResult r = run_layer_case(build_layer_case(p), device);
  EXPECT_TRUE(r.pass()) << p.name() << "\n" << r.summary();
}

TEST(LayerGpu, EverySchemeAndDtype) {
  MOEVAL_REQUIRE_GPUS(1);
  for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
    for (int group : {kChannelwise, 32, 128}) {
      for (DType act : {DType::f16, DType::bf16}) expect_layer_passes(layer_problem(type, group, act));
    }
  }
}

TEST(LayerGpu, ManyExpertsDecodeShape) {
  MOEVAL_REQUIRE_GPUS(1);
  expect_layer_passes(layer_problem(WeightType::uint4b8, 128, DType::bf16, 256, 4, 8, 512, 128));
  expect_layer_passes(layer_problem(WeightType::uint4, 64, DType::bf16, 512, 3, 8, 256, 64));
}

TEST(LayerGpu, ExpertParallelAndEmptyExperts) {
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

TEST(LayerGpu, SingleTokenSingleExpert) {
  MOEVAL_REQUIRE_GPUS(1);
  expect_layer_passes(layer_problem(WeightType::uint4b8, 32, DType::bf16, 1, 1, 1, 64, 32));
}

}  // namespace
}  // namespace moeval::testbed
