// A row-parallel layer's K shards add up to the layer: the sum over ranks of each rank's fp64
// reference equals the unsharded full-K reference (exactly in the exact tier, within fp64 summation
// error in the bounded tier). This is what a tensor-parallel all-reduce of the kernels' outputs relies on.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "moeval/reference/gemm_reference.h"

namespace moeval {
namespace {

struct ShardCase {
  ProblemKind kind;
  Tier tier;
  QuantScheme scheme;
  std::int64_t shards;
  std::int64_t local_k;
};

std::string case_name(const ::testing::TestParamInfo<ShardCase>& info) {
  const ShardCase& c = info.param;
  return std::string(to_string(c.kind)) + "_" + std::string(to_string(c.tier)) + "_" +
         std::string(to_string(c.scheme.type)) + "_g" + std::to_string(c.scheme.group_size) + "_" +
         std::string(to_string(c.scheme.act)) + "_" + std::to_string(c.shards) + "shards_K" + std::to_string(c.local_k);
}

MoeProblem problem_of(const ShardCase& c, std::int64_t shards, std::int64_t rank) {
  MoeProblem p;
  p.kind = c.kind;
  p.experts = 6;
  p.tokens = 7;
  p.topk = 2;
  p.hidden = c.kind == ProblemKind::gemm1 ? c.local_k * c.shards : 64;  // the whole layer's K ...
  p.inter = c.kind == ProblemKind::gemm1 ? 32 : c.local_k * c.shards;
  p.scheme = c.scheme;
  p.tier = c.tier;
  p.seed = 5;
  p.expert_map = {0, 1, -1, 2, 3, -1};
  if (shards > 1) {  // ... or one rank's
    if (c.kind == ProblemKind::gemm1) p.hidden = c.local_k; else p.inter = c.local_k;
    p.k_shards = shards;
    p.k_shard_rank = rank;
  }
  return p;
}

class KShardReference : public ::testing::TestWithParam<ShardCase> {};

TEST_P(KShardReference, SumOverRanksIsTheFullKReference) {
  const ShardCase& c = GetParam();
  const reference::ReferenceOutput whole = reference::reference_gemm(build_gemm_case(problem_of(c, 1, 0)));
  std::vector<double> sum(whole.y.size(), 0.0);
  for (std::int64_t rank = 0; rank < c.shards; ++rank) {
    const GemmCase shard = build_gemm_case(problem_of(c, c.shards, rank));
    ASSERT_EQ(shard.shape.k, c.local_k);
    const reference::ReferenceOutput part = reference::reference_gemm(shard);
    ASSERT_EQ(part.y.size(), whole.y.size());
    EXPECT_EQ(part.reduction_length, c.local_k);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += part.y[i];
  }
  const std::int64_t K = c.local_k * c.shards;
  // fp64 summation error of either side: γ·Σ|t| with Σ|t| <= √K·S (Cauchy–Schwarz); the ranks'
  // partial sums and the weight multiply add a few roundings each.
  const double gamma = double(K + 2 * c.shards + 4) * std::ldexp(1.0, -53) * std::sqrt(double(K));
  std::int64_t nonzero = 0;
  for (std::size_t i = 0; i < sum.size(); ++i) {
    if (c.tier == Tier::exact) {
      ASSERT_EQ(sum[i], whole.y[i]) << "element " << i;  // every partial sum is exact
    } else {
      ASSERT_LE(std::fabs(sum[i] - whole.y[i]), 2.0 * gamma * whole.s[i]) << "element " << i;
    }
    nonzero += whole.y[i] != 0.0;
  }
  EXPECT_GT(nonzero, 0) << "a test on zeros proves nothing";
}

constexpr QuantScheme kpart(WeightType type, int group, DType act) { return QuantScheme{type, group, true, false, act}; }

INSTANTIATE_TEST_SUITE_P(
    Shards, KShardReference,
    ::testing::Values(ShardCase{ProblemKind::gemm2, Tier::bounded, kpart(WeightType::uint4b8, 32, DType::bf16), 4, 64},
                      ShardCase{ProblemKind::gemm2, Tier::bounded, kpart(WeightType::uint8b128, 128, DType::f16), 2, 128},
                      ShardCase{ProblemKind::gemm2, Tier::bounded, kpart(WeightType::uint4b8, 64, DType::f16), 8, 16},
                      ShardCase{ProblemKind::gemm1, Tier::bounded, kpart(WeightType::uint4b8, 128, DType::bf16), 2, 192},
                      ShardCase{ProblemKind::gemm2, Tier::exact, kpart(WeightType::uint4b8, 32, DType::bf16), 4, 32},
                      ShardCase{ProblemKind::gemm1, Tier::exact, kpart(WeightType::uint8b128, 64, DType::f16), 3, 64}),
    case_name);

}  // namespace
}  // namespace moeval
