// The problems of the multi_gpu tier's CrossDevice test (the cuda:1 bug class): every weight type
// and both GEMMs at 8-row blocks, act-order with fp16, and one problem per taller item height, so
// that every Marlin kernel form (the 8-row column and slice kernels, the 16-row thread-block kernel,
// the 32-row one-warpgroup wgmma form, the 64- and 128-row producer form) runs with its buffers on
// device 1 while device 0 is current. The block size each problem gets follows from its tokens ·
// topk / experts (choose_block_size's Marlin table for the wgmma path); the cpu tier checks that
// the list still reaches every height (marlin_host_test.cpp), so a change of the thresholds cannot
// quietly leave a form out.
#pragma once

#include <vector>

#include "gpu_case_support.h"

namespace moeval::testbed {

inline std::vector<MoeProblem> cross_device_problems() {
  std::vector<MoeProblem> problems;
  for (Tier tier : {Tier::exact, Tier::bounded}) {
    for (WeightType type : {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8}) {
      for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
        problems.push_back(gemm_problem(kind, type, 64, DType::bf16, tier, 64, 33, 8));  // ~4 per expert: 8 rows
      }
    }
  }
  // Act-order (for the kernels whose layout carries g_idx) and fp16.
  MoeProblem act_order = gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 64, DType::f16, Tier::bounded, 64, 33, 8);
  act_order.scheme.act_order = true;
  problems.push_back(act_order);
  // Taller items, bounded tier, 4-bit (uint4b8 on GEMM1, uint4 with zero points on GEMM2) and bf16:
  // (experts, tokens, topk) = 10, 20, 64 and 512 tokens per expert.
  struct Height {
    std::int64_t experts, tokens, topk;
  };
  for (const Height h : {Height{16, 40, 4}, Height{16, 80, 4}, Height{8, 128, 4}, Height{4, 1024, 2}}) {
    problems.push_back(gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 64, DType::bf16, Tier::bounded, h.experts,
                                    h.tokens, h.topk));
    problems.push_back(gemm_problem(ProblemKind::gemm2, WeightType::uint4, 32, DType::bf16, Tier::bounded, h.experts,
                                    h.tokens, h.topk));
  }
  return problems;
}

}  // namespace moeval::testbed
