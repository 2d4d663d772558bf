// The Marlin MoE GEMM against the CPU fp64 reference: exact tier (bitwise) and bounded tier over the
// scheme × dtype × group matrix, act-order × is_k_full, expert counts, routing shapes, EP maps,
// batch sizes and block sizes; and the adapter's refusals are the kernel's own.
#include <gtest/gtest.h>

#include "gpu_case_support.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/marlin_kernel.h"

namespace moeval::testbed {
namespace {

const WeightType kTypes[] = {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8};
const int kGroups[] = {kChannelwise, 32, 64, 128};
const DType kDTypes[] = {DType::f16, DType::bf16};

void sweep_schemes(Tier tier, ProblemKind kind) {
  const auto kernel = make_marlin_kernel();
  for (WeightType type : kTypes) {
    for (int group : kGroups) {
      for (DType act : kDTypes) expect_case_passes(*kernel, gemm_problem(kind, type, group, act, tier));
    }
  }
}

TEST(MarlinExact, Gemm1EverySchemeDtypeGroup) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_schemes(Tier::exact, ProblemKind::gemm1);
}

TEST(MarlinExact, Gemm2EverySchemeDtypeGroupWithRoutingWeights) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_schemes(Tier::exact, ProblemKind::gemm2);
}

TEST(MarlinBounded, Gemm1EverySchemeDtypeGroup) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_schemes(Tier::bounded, ProblemKind::gemm1);
}

TEST(MarlinBounded, Gemm2EverySchemeDtypeGroupWithRoutingWeights) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_schemes(Tier::bounded, ProblemKind::gemm2);
}

// Act-order (g_idx, perm) for the symmetric types, with the grouped path (is_k_full) and the per-row
// g_idx path (is_k_full = false, whole K present: it must give the same answer).
void sweep_act_order(Tier tier) {
  const auto kernel = make_marlin_kernel();
  for (WeightType type : {WeightType::uint4b8, WeightType::uint8b128}) {
    for (int group : {32, 64, 128}) {
      for (DType act : kDTypes) {
        for (bool k_full : {true, false}) {
          for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
            // I = 256: GEMM2's K holds two groups of 128 (act-order needs more than one).
            MoeProblem p = gemm_problem(kind, type, group, act, tier, 8, 16, 2, 256, 256);
            p.scheme.act_order = true;
            p.scheme.is_k_full = k_full;
            expect_case_passes(*kernel, p);
          }
        }
      }
    }
  }
}

TEST(MarlinActOrder, ExactEveryGroupDtypeKFullAndKPart) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_act_order(Tier::exact);
}

TEST(MarlinActOrder, BoundedEveryGroupDtypeKFullAndKPart) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_act_order(Tier::bounded);
}

TEST(MarlinBounded, RealisticKAtDeepSeekHiddenWithAndWithoutActOrder) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_marlin_kernel();
  for (DType act : kDTypes) {
    for (bool act_order : {false, true}) {
      MoeProblem p = gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 128, act, Tier::bounded,
                                  /*E*/ 16, /*M*/ 8, /*topk*/ 4, /*H*/ 7168, /*I*/ 64);
      p.scheme.act_order = act_order;
      expect_case_passes(*kernel, p);
    }
  }
}

TEST(MarlinExperts, OneToFiveHundredTwelve) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_marlin_kernel();
  for (std::int64_t experts : {1, 8, 128, 256, 512}) {
    const std::int64_t topk = std::min<std::int64_t>(experts, 8);
    for (Tier tier : {Tier::exact, Tier::bounded}) {
      expect_case_passes(*kernel, gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 32, DType::bf16, tier,
                                               experts, /*M*/ 64, topk, /*H*/ 64, /*I*/ 32));
      MoeProblem act_order = gemm_problem(ProblemKind::gemm2, WeightType::uint4b8, 32, DType::bf16, tier, experts,
                                          /*M*/ 64, topk, /*H*/ 64, /*I*/ 64);
      act_order.scheme.act_order = true;
      expect_case_passes(*kernel, act_order);
    }
  }
}

TEST(MarlinRouting, EmptyExpertsAllToOneZipfAndSoftmaxRaw) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_marlin_kernel();
  for (RoutingKind kind : {RoutingKind::empty_experts, RoutingKind::all_to_one, RoutingKind::zipf,
                           RoutingKind::uniform, RoutingKind::softmax_topk}) {
    for (ProblemKind gemm : {ProblemKind::gemm1, ProblemKind::gemm2}) {
      MoeProblem p = gemm_problem(gemm, WeightType::uint4, 64, DType::f16, Tier::exact, 32, 48, 4);
      p.routing.kind = kind;
      p.routing.empty_experts = kind == RoutingKind::empty_experts ? 20 : 0;
      p.routing.renormalize = false;
      expect_case_passes(*kernel, p);
    }
  }
}

TEST(MarlinRouting, ExpertParallelMapsWriteZerosForRemoteExperts) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_marlin_kernel();
  for (ProblemKind gemm : {ProblemKind::gemm1, ProblemKind::gemm2}) {
    for (bool act_order : {false, true}) {
      MoeProblem p = gemm_problem(gemm, WeightType::uint8b128, 32, DType::bf16, Tier::exact, 16, 32, 4);
      p.scheme.act_order = act_order;
      // Rank 1 of 2: global experts 8..15 are local 0..7, the rest live elsewhere.
      p.expert_map.assign(16, -1);
      for (int e = 8; e < 16; ++e) p.expert_map[std::size_t(e)] = e - 8;
      expect_case_passes(*kernel, p);
    }
  }
}

TEST(MarlinBatch, TokensFromOneTo4096) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_marlin_kernel();
  for (std::int64_t tokens : {1, 2, 3, 7, 16, 33, 64, 255, 1024, 4096}) {
    expect_case_passes(*kernel, gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 128, DType::bf16, Tier::bounded,
                                             64, tokens, 8, /*H*/ 256, /*I*/ 32));
  }
}

// Every block size moe_align and the GEMM accept: each passes, deterministically; in the exact tier
// every order gives the same exact sum, so the bits must agree across block sizes.
TEST(MarlinBlocks, EveryBlockSizePasses) {
  MOEVAL_REQUIRE_GPUS(1);
  for (Tier tier : {Tier::exact, Tier::bounded}) {
    for (bool act_order : {false, true}) {
      MoeProblem p = gemm_problem(ProblemKind::gemm2, act_order ? WeightType::uint4b8 : WeightType::uint4, 32,
                                  DType::bf16, tier, 16, 40, 4);
      p.scheme.act_order = act_order;
      const GemmCase c = build_gemm_case(p);
      std::vector<std::uint16_t> first;
      for (int block : {8, 16, 32, 48, 64, 128}) {
        const CaseResult r = run_gemm_case(*make_marlin_kernel({block}), c, 0);
        EXPECT_TRUE(r.pass()) << "block size " << block << ": " << r.summary();
        if (tier == Tier::exact) {
          if (first.empty()) first = r.output;
          EXPECT_EQ(r.output, first) << "block size " << block << " changed exact-tier bits of " << p.name();
        }
      }
    }
  }
}

// The adapter's unsupported_reason() must agree with the kernel itself. The fixtures' packer cannot
// build the shapes the kernel refuses, so a supported case is prepared and the kernel called with one
// argument changed to what it must refuse: each time one std::invalid_argument, never a launch.
TEST(MarlinErrors, AdapterRefusalsAreTheKernelsOwn) {
  MOEVAL_REQUIRE_GPUS(1);
  MoeProblem p = gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 64, DType::bf16, Tier::exact, 8, 4, 2, 128, 64);
  const GemmCase c = build_gemm_case(p);
  ASSERT_EQ(make_marlin_kernel()->unsupported_reason(c), "");
  PreparedMarlin prepared(c, 0);
  GuardedBuffer out("out", 0, std::size_t(c.routing.topk_ids.size() * c.shape.n) * 2, 2);
  const kernels::MarlinMoeArgs good = prepared.aligned_args();

  // Each refusal must be the changed argument's own (a bare "throws" passes on any other rule).
  const auto expect_refusal = [](const kernels::MarlinMoeArgs& args, const std::string& message) {
    try {
      kernels::marlin_moe(args);
      ADD_FAILURE() << "no error; expected '" << message << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  QuantizedWeights w = c.w;  // the adapter judges these
  kernels::MarlinMoeArgs bad = good;
  bad.c = out.data();
  bad.shape.n = 96;  // not a multiple of 64
  w.n = 96;
  EXPECT_NE(marlin_unsupported_reason(w).find("N = 96"), std::string::npos);
  expect_refusal(bad, "marlin_moe: N = 96");

  bad = good;
  bad.c = out.data();
  bad.shape.k = 120;  // not a multiple of 16
  w = c.w;
  w.k = 120;
  EXPECT_NE(marlin_unsupported_reason(w).find("K = 120"), std::string::npos);
  expect_refusal(bad, "marlin_moe: K = 120");  // the group rule (G = 64) speaks first

  bad = good;
  bad.c = out.data();
  bad.weights.type = kernels::MarlinWeightType::uint4;  // act-order with zero points
  bad.weights.act_order = true;
  bad.weights.zeros = good.weights.qweight;
  bad.weights.g_idx = static_cast<const std::int32_t*>(good.a);
  bad.weights.perm = static_cast<const std::int32_t*>(good.a);
  w = c.w;
  w.scheme.type = WeightType::uint4;
  w.scheme.act_order = true;
  EXPECT_NE(marlin_unsupported_reason(w).find("act-order with zero points"), std::string::npos);
  expect_refusal(bad, "marlin_moe: act-order with zero points is not supported");

  bad = good;
  bad.c = out.data();
  bad.blocks.block_size = 24;
  expect_refusal(bad, "marlin_moe: blocks.block_size = 24; allowed 8, 16, 32, 48, 64, 128");

  // The unchanged arguments run (the refusals above are about the one changed argument).
  bad = good;
  bad.c = out.data();
  EXPECT_NO_THROW(kernels::marlin_moe(bad));
  synchronize_device(0, "marlin_moe");
}

}  // namespace
}  // namespace moeval::testbed
