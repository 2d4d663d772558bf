// Named regression tests for the Marlin kernel's real bug classes (docs/testing.md, bug classes): the
// scale permutation chosen from the wrong size_k, zero points at group 32, an under-allocated
// workspace, and act-order with is_k_full = false. (Device 1 while device 0 is current and outputs
// past 2^31 elements are covered for every registered kernel by the multi_gpu and large tiers.)
#include <gtest/gtest.h>

#include <algorithm>

#include "gpu_case_support.h"
#include "moeval/fixtures/layouts/marlin_scales.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/marlin_kernel.h"

namespace moeval::testbed {
namespace {

using layouts::MarlinScaleOrder;

// A packer that picks the scale permutation from another GEMM's K (the w13/w2 mix-up) must be
// caught: the check FAILS, with mismatching elements and no other excuse (no memory or device
// error), while the same case packed from its own K passes.
void expect_wrong_size_k_flagged(const MoeProblem& p, std::int64_t wrong_k) {
  const GemmCase c = build_gemm_case(p);
  const MarlinScaleOrder right = layouts::marlin_scale_order_for(c.w.scheme, c.w.k);
  const MarlinScaleOrder wrong = layouts::marlin_scale_order_for(c.w.scheme, wrong_k);
  ASSERT_NE(right, wrong) << "the test needs a size_k that selects the other permutation";
  const CaseResult good = run_gemm_case(*make_marlin_kernel({0, right}), c, 0);
  EXPECT_TRUE(good.pass()) << good.summary();
  const CaseResult flagged = run_gemm_case(*make_marlin_kernel({0, wrong}), c, 0);
  EXPECT_FALSE(flagged.verdict.pass()) << "scales permuted " << layouts::to_string(wrong) << " (from size_k = " << wrong_k
                                       << ") passed the check: " << flagged.summary();
  EXPECT_FALSE(flagged.verdict.numerics_pass) << flagged.summary();
  EXPECT_GT(flagged.verdict.violations, 0) << flagged.summary();
  EXPECT_TRUE(flagged.memory_errors.empty()) << flagged.summary();
  EXPECT_TRUE(flagged.contract_errors.empty()) << flagged.summary();
}

// GEMM2 of a layer with I = one group (channelwise permutation) packed from H = four groups (grouped).
TEST(MarlinScaleOrderWrongSizeK, GroupedPermutationOnAOneGroupGemm2IsFlagged) {
  MOEVAL_REQUIRE_GPUS(1);
  for (Tier tier : {Tier::exact, Tier::bounded}) {
    for (DType act : {DType::f16, DType::bf16}) {
      const MoeProblem p = gemm_problem(ProblemKind::gemm2, WeightType::uint4b8, 128, act, tier, 8, 16, 2, 512, 128);
      expect_wrong_size_k_flagged(p, /*H*/ 512);
    }
  }
}

// GEMM1 of a layer with H = four groups (grouped permutation) packed from I = one group (channelwise).
TEST(MarlinScaleOrderWrongSizeK, ChannelwisePermutationOnAGroupedGemm1IsFlagged) {
  MOEVAL_REQUIRE_GPUS(1);
  for (Tier tier : {Tier::exact, Tier::bounded}) {
    for (WeightType type : {WeightType::uint4b8, WeightType::uint8b128}) {
      const MoeProblem p = gemm_problem(ProblemKind::gemm1, type, 128, DType::bf16, tier, 8, 16, 2, 512, 128);
      expect_wrong_size_k_flagged(p, /*I*/ 128);
    }
  }
}

// The zero-point loader at group 32 (the smallest group: most zero-point rows per K) must be right
// for both zero-point types, both GEMMs, both dtypes and both tiers.
TEST(MarlinZeroPointsGroup32, EveryZeroPointTypeGemmDtypeTierPasses) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_marlin_kernel();
  for (WeightType type : {WeightType::uint4, WeightType::uint8}) {
    for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
      for (DType act : {DType::f16, DType::bf16}) {
        for (Tier tier : {Tier::exact, Tier::bounded}) {
          const CaseResult r = expect_case_passes(*kernel, gemm_problem(kind, type, 32, act, tier, 16, 24, 4, 512, 256));
          EXPECT_FALSE(r.output.empty());
        }
      }
    }
  }
}

// An act-order GEMM with a workspace one byte short of marlin_moe_workspace_bytes: one clear
// std::invalid_argument naming the workspace, and nothing written to the output.
TEST(MarlinWorkspaceTooSmall, OneClearInvalidArgument) {
  MOEVAL_REQUIRE_GPUS(1);
  MoeProblem p = gemm_problem(ProblemKind::gemm1, WeightType::uint4b8, 64, DType::bf16, Tier::exact, 8, 16, 2, 256, 128);
  p.scheme.act_order = true;
  const GemmCase c = build_gemm_case(p);
  PreparedMarlin prepared(c, 0);
  GuardedBuffer out("out", 0, std::size_t(c.routing.topk_ids.size() * c.shape.n) * 2, 2);
  kernels::MarlinMoeArgs args = prepared.aligned_args();
  ASSERT_GT(args.workspace_bytes, 0u) << "act-order needs a workspace (kernels/marlin_moe.h)";
  ASSERT_EQ(args.workspace_bytes, kernels::marlin_moe_workspace_bytes(args));
  args.c = out.data();
  args.workspace_bytes -= 1;
  try {
    kernels::marlin_moe(args);
    ADD_FAILURE() << "marlin_moe accepted a workspace of " << args.workspace_bytes << " bytes";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("workspace"), std::string::npos) << e.what();
  }
  synchronize_device(0, "marlin_moe (refused)");
  const auto bits = out.download<std::uint16_t>();
  EXPECT_TRUE(std::all_of(bits.begin(), bits.end(), [](std::uint16_t b) { return b == 0xFFFF; }))
      << "the refused call wrote to its output";
}

// moe_forward on Marlin act-order weights sizes its workspace with the gather space included; one
// byte less is refused the same way, before anything is launched.
TEST(MarlinWorkspaceTooSmall, MoeForwardOnActOrderWeightsRefusesOneByteLess) {
  MOEVAL_REQUIRE_GPUS(1);
  MoeProblem p = gemm_problem(ProblemKind::layer, WeightType::uint4b8, 64, DType::bf16, Tier::bounded, 8, 16, 2, 256, 128);
  p.scheme.act_order = true;
  const LayerCase layer = build_layer_case(p);
  const MarlinDeviceWeights w13("w13", layer.w13, 0), w2("w2", layer.w2, 0);
  const auto x = GuardedBuffer::upload("x", 0, layer.x);
  const auto ids = GuardedBuffer::upload("topk_ids", 0, layer.routing.topk_ids);
  const auto weights = GuardedBuffer::upload("topk_weights", 0, layer.routing.topk_weights);
  kernels::MoeForwardArgs args;
  args.shape = {p.tokens, p.hidden, p.inter, int(p.experts), int(p.topk)};
  args.hidden_states = x.data();
  args.topk_ids = ids.as<std::int32_t>();
  args.topk_weights = weights.as<float>();
  args.format = kernels::MoeWeightFormat::marlin;
  args.marlin_w13 = w13.view();
  args.marlin_w2 = w2.view();
  const std::size_t needed = kernels::moe_forward_workspace_bytes(args);
  kernels::MoeForwardArgs plain = args;
  plain.marlin_w13.act_order = plain.marlin_w2.act_order = false;
  // The gather space: M·topk rows of the larger K, in 16-bit values.
  EXPECT_GE(needed, kernels::moe_forward_workspace_bytes(plain) + std::size_t(p.tokens * p.topk * p.hidden) * 2);
  GuardedBuffer workspace("workspace", 0, needed - 1);  // bytes: one short of an int32 multiple too
  GuardedBuffer out("out", 0, std::size_t(p.tokens * p.hidden) * 2, 2);
  args.workspace = workspace.data();
  args.workspace_bytes = workspace.bytes();
  args.out = out.data();
  EXPECT_THROW(kernels::moe_forward(args), std::invalid_argument);
}

// Act-order with is_k_full = false (the per-row g_idx path a tensor-parallel K shard takes): exact
// tier, bitwise, for both symmetric types, every group and both GEMMs; and on the same data the
// grouped path (is_k_full) must give the same bits.
TEST(MarlinActOrderKPart, IsKFullFalseMatchesReferenceAndTheGroupedPathBitwise) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_marlin_kernel();
  for (WeightType type : {WeightType::uint4b8, WeightType::uint8b128}) {
    for (int group : {32, 64, 128}) {
      for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
        MoeProblem p = gemm_problem(kind, type, group, DType::bf16, Tier::exact, 16, 24, 4, 512, 256);
        p.scheme.act_order = true;
        p.scheme.is_k_full = false;
        const CaseResult k_part = expect_case_passes(*kernel, p);
        p.scheme.is_k_full = true;
        const CaseResult k_full = expect_case_passes(*kernel, p);
        EXPECT_EQ(k_part.output, k_full.output) << p.name() << ": the is_k_full = false path differs from the grouped path";
      }
    }
  }
}

// A real K shard (one tensor-parallel rank's rows of the layer, their GLOBAL g_idx and every group's
// scales; groups uneven or empty on the rank): every rank of 2 and 4, both GEMMs, exact tier.
TEST(MarlinActOrderKPart, RealKShardEveryRankPassesBitwise) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_marlin_kernel();
  for (WeightType type : {WeightType::uint4b8, WeightType::uint8b128}) {
    for (std::int64_t shards : {2, 4}) {
      for (std::int64_t rank = 0; rank < shards; ++rank) {
        for (ProblemKind kind : {ProblemKind::gemm1, ProblemKind::gemm2}) {
          MoeProblem p = gemm_problem(kind, type, 64, DType::bf16, Tier::exact, 16, 24, 4, 256, 128);
          p.scheme.act_order = true;
          p.scheme.is_k_full = false;
          p.k_shards = shards;
          p.k_shard_rank = rank;
          expect_case_passes(*kernel, p);
        }
      }
    }
  }
}

}  // namespace
}  // namespace moeval::testbed
