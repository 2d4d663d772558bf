// Test support: a GEMM configuration as the GPU reference's value-parameterised tests sweep it
// (kind × dtype × hidden size), the test-name suffix it gives (gemm1_bf16_H512), and the small
// bounded-tier uint4b8 g128 problem built from it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "moeval/fixtures/problem.h"

namespace moeval::cli::test_support {

struct GemmConfig {
  ProblemKind kind;
  DType act;
  std::int64_t hidden;
};

inline std::string gemm_config_name(const ::testing::TestParamInfo<GemmConfig>& info) {
  return std::string(to_string(info.param.kind)) + "_" + std::string(to_string(info.param.act)) + "_H" +
         std::to_string(info.param.hidden);
}

// E experts, M tokens routed top-k, intermediate size 256.
struct SmallShape {
  std::int64_t experts, tokens, topk;
  std::uint64_t seed;
};

inline MoeProblem small_problem(const GemmConfig& c, const SmallShape& s) {
  MoeProblem p;
  p.kind = c.kind;
  p.experts = s.experts;
  p.tokens = s.tokens;
  p.topk = s.topk;
  p.hidden = c.hidden;
  p.inter = 256;
  p.scheme = {WeightType::uint4b8, 128, false, true, c.act};
  p.tier = Tier::bounded;
  p.seed = s.seed;
  return p;
}

}  // namespace moeval::cli::test_support
