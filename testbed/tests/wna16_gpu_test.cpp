// The WNA16 MoE GEMM against the CPU fp64 reference: exact tier (bitwise) and bounded tier over the
// scheme × dtype × group matrix, expert counts, routing shapes, EP maps and batch sizes.
#include <gtest/gtest.h>

#include "gpu_case_support.h"
#include "moeval/testbed/devices.h"

namespace moeval::testbed {
namespace {

const WeightType kTypes[] = {WeightType::uint4b8, WeightType::uint4, WeightType::uint8b128, WeightType::uint8};
const int kGroups[] = {kChannelwise, 32, 64, 128};
const DType kDTypes[] = {DType::f16, DType::bf16};

void sweep_schemes(Tier tier, ProblemKind kind) {
  const auto kernel = make_wna16_kernel();
  for (WeightType type : kTypes) {
    for (int group : kGroups) {
      for (DType act : kDTypes) {
        expect_case_passes(*kernel, gemm_problem(kind, type, group, act, tier));
      }
    }
  }
}

TEST(Wna16Exact, Gemm1EverySchemeDtypeGroup) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_schemes(Tier::exact, ProblemKind::gemm1);
}

TEST(Wna16Exact, Gemm2EverySchemeDtypeGroupWithRoutingWeights) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_schemes(Tier::exact, ProblemKind::gemm2);
}

TEST(Wna16Bounded, Gemm1EverySchemeDtypeGroup) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_schemes(Tier::bounded, ProblemKind::gemm1);
}

TEST(Wna16Bounded, Gemm2EverySchemeDtypeGroupWithRoutingWeights) {
  MOEVAL_REQUIRE_GPUS(1);
  sweep_schemes(Tier::bounded, ProblemKind::gemm2);
}

TEST(Wna16Bounded, RealisticKAtDeepSeekHidden) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_wna16_kernel();
  for (DType act : kDTypes) {
    expect_case_passes(*kernel, gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 128, act, Tier::bounded,
                                             /*E*/ 16, /*M*/ 8, /*topk*/ 4, /*H*/ 7168, /*I*/ 64));
  }
}

TEST(Wna16Experts, OneToFiveHundredTwelve) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_wna16_kernel();
  for (std::int64_t experts : {1, 8, 128, 256, 512}) {
    const std::int64_t topk = std::min<std::int64_t>(experts, 8);
    for (Tier tier : {Tier::exact, Tier::bounded}) {
      expect_case_passes(*kernel, gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 32, DType::bf16, tier,
                                               experts, /*M*/ 64, topk, /*H*/ 64, /*I*/ 32));
    }
  }
}

TEST(Wna16Routing, EmptyExpertsAllToOneZipfAndSoftmaxRaw) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_wna16_kernel();
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

TEST(Wna16Routing, ExpertParallelMapsWriteZerosForRemoteExperts) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_wna16_kernel();
  for (ProblemKind gemm : {ProblemKind::gemm1, ProblemKind::gemm2}) {
    MoeProblem p = gemm_problem(gemm, WeightType::uint8b128, 32, DType::bf16, Tier::exact, 16, 32, 4);
    // Rank 1 of 2: global experts 8..15 are local 0..7, the rest live elsewhere.
    p.expert_map.assign(16, -1);
    for (int e = 8; e < 16; ++e) p.expert_map[std::size_t(e)] = e - 8;
    expect_case_passes(*kernel, p);
  }
}

TEST(Wna16Batch, TokensFromOneTo4096) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_wna16_kernel();
  for (std::int64_t tokens : {1, 2, 3, 7, 16, 33, 64, 255, 1024, 4096}) {
    expect_case_passes(*kernel, gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 128, DType::bf16, Tier::bounded,
                                             64, tokens, 8, /*H*/ 256, /*I*/ 32));
  }
}

// Every block size moe_align and the GEMM accept: each passes, deterministically. (The bits may
// differ between block sizes: larger blocks split K across warps and reduce in another fixed order.)
TEST(Wna16Blocks, EveryBlockSizePasses) {
  MOEVAL_REQUIRE_GPUS(1);
  for (Tier tier : {Tier::exact, Tier::bounded}) {
    const GemmCase c = build_gemm_case(gemm_problem(ProblemKind::gemm2, WeightType::uint4, 32, DType::bf16, tier, 16, 40, 4));
    std::vector<std::uint16_t> first;
    for (int block : {8, 16, 32, 48, 64, 128}) {
      const CaseResult r = run_gemm_case(*make_wna16_kernel(block), c, 0);
      EXPECT_TRUE(r.pass()) << "block size " << block << ": " << r.summary();
      // In the exact tier every order gives the same exact sum, so the bits must agree.
      if (tier == Tier::exact) {
        if (first.empty()) first = r.output;
        EXPECT_EQ(r.output, first) << "block size " << block << " changed exact-tier bits";
      }
    }
  }
}

// The adapter's unsupported_reason() must agree with the kernel itself: each shape it refuses, the
// kernel refuses too (forced through prepare/run), and a neighbouring shape it accepts runs.
TEST(Wna16Errors, AdapterRefusalsAreTheKernelsOwn) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_wna16_kernel();
  struct Shape {
    std::int64_t hidden, inter;
    const char* refused;  // the part of the reason that names the limit
  };
  for (const Shape& s : {Shape{48, 64, "K = 48"}, Shape{64, 12, "N = 24"}}) {
    const GemmCase c = build_gemm_case(gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, kChannelwise,
                                                    DType::bf16, Tier::bounded, 8, 4, 2, s.hidden, s.inter));
    EXPECT_NE(kernel->unsupported_reason(c).find(s.refused), std::string::npos) << kernel->unsupported_reason(c);
    auto prepared = kernel->prepare(c, 0);
    GuardedBuffer out("out", 0, std::size_t(c.routing.topk_ids.size() * c.shape.n) * 2);
    EXPECT_THROW(prepared->run(out), std::invalid_argument) << "the kernel accepted " << c.problem.name();
  }
  expect_case_passes(*kernel, gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, kChannelwise, DType::bf16,
                                           Tier::bounded, 8, 4, 2, 64, 16));
}

}  // namespace
}  // namespace moeval::testbed
