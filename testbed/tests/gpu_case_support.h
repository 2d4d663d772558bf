// Shared helpers of the GPU tiers: build a GEMM problem by name-like fields, run it through a
// kernel under test, and fail with the full verdict and reproduce information.
#pragma once

#include <gtest/gtest.h>

#include "moeval/fixtures/cases.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/wna16_kernel.h"

namespace moeval::testbed {

inline MoeProblem gemm_problem(ProblemKind kind, WeightType type, int group, DType act, Tier tier,
                               std::int64_t experts = 8, std::int64_t tokens = 16, std::int64_t topk = 2,
                               std::int64_t hidden = 256, std::int64_t inter = 128, std::uint64_t seed = 1) {
  MoeProblem p;
  p.kind = kind;
  p.experts = experts;
  p.tokens = tokens;
  p.topk = topk;
  p.hidden = hidden;
  p.inter = inter;
  p.scheme.type = type;
  p.scheme.group_size = group;
  p.scheme.act = act;
  p.tier = tier;
  p.seed = seed;
  return p;
}

// Runs the case and records a gtest failure carrying the verdict summary (worst element with its
// indices) and the problem name, which rebuilds the case bit for bit.
inline CaseResult expect_case_passes(const GemmKernelUnderTest& kernel, const MoeProblem& problem, int device = 0) {
  const GemmCase c = build_gemm_case(problem);
  const std::string why = kernel.unsupported_reason(c);
  if (!why.empty()) {
    ADD_FAILURE() << kernel.name() << " does not support " << problem.name() << ": " << why;
    return {};
  }
  CaseResult r = run_gemm_case(kernel, c, device);
  EXPECT_TRUE(r.pass()) << r.summary();
  return r;
}

}  // namespace moeval::testbed
