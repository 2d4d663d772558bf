// Host-only facts of the Marlin integration (cpu tier): the registry lists the Marlin kernel, so
// `moeval check`, `sweep` and the golden GPU test run it; the golden corpus holds act-order cases
// it supports (which the WNA16 kernel cannot run); the adapter refuses exactly the weights the
// kernel refuses; moe_forward's workspace formula includes the act-order gather space; and the
// multi_gpu tier's cross-device problems reach every item height.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "cross_device_problems.h"
#include "moeval/fixtures/errors.h"
#include "moeval/golden/loader.h"
#include "moeval/kernels/moe_forward.h"
#include "moeval/kernels/marlin_moe.h"
#include "moeval/testbed/dtype.h"
#include "moeval/testbed/kernel_under_test.h"
#include "moeval/testbed/marlin_kernel.h"
#include "moeval/testbed/wna16_kernel.h"

namespace moeval::testbed {
namespace {

TEST(MarlinRegistry, BuiltinsIncludeMarlin) {
  register_builtin_kernels();
  const auto marlin = KernelRegistry::instance().find(kMarlinKernelName);
  ASSERT_NE(marlin, nullptr);
  EXPECT_EQ(marlin->name(), kMarlinKernelName);
}

// The golden GEMM test runs every registered kernel on every case it supports: Marlin must support
// every case of the Marlin family, and the corpus must give it act-order cases (± is_k_full).
TEST(MarlinGoldenCoverage, MarlinSupportsEveryMarlinFamilyCaseIncludingActOrder) {
  const auto kernel = make_marlin_kernel();
  const auto wna16 = make_wna16_kernel();
  const auto path = golden::family_path(golden::default_golden_dir(), golden::Family::marlin);
  int cases = 0, act_order = 0, k_part = 0;
  for (const std::string& name : golden::list_cases(path)) {
    const golden::GoldenGemmCase g = golden::load_gemm_case(path, name);
    EXPECT_EQ(kernel->unsupported_reason(g.gemm), "") << name;
    ++cases;
    if (g.gemm.w.scheme.act_order) {
      ++act_order;
      k_part += g.gemm.w.scheme.is_k_full ? 0 : 1;
      EXPECT_NE(wna16->unsupported_reason(g.gemm), "") << name << ": WNA16 claims an act-order case";
    }
  }
  EXPECT_GT(cases, 0);
  EXPECT_GT(act_order, 0) << "no act-order case in " << path;
  EXPECT_GT(k_part, 0) << "no is_k_full = false case in " << path;
}

// MarlinLayerGpu.GoldenLayerCasesStageByStage runs every golden layer case both Marlin GEMMs
// support, act-order ones included: the layer corpus must hold such cases, or that test would run
// none of them without a word.
TEST(MarlinGoldenCoverage, LayerCorpusHoldsActOrderCasesMarlinSupports) {
  const auto path = golden::family_path(golden::default_golden_dir(), golden::Family::layer);
  int supported = 0, act_order = 0;
  for (const std::string& name : golden::list_cases(path)) {
    const golden::GoldenLayerCase g = golden::load_layer_case(path, name);
    if (!marlin_unsupported_reason(g.layer.w13).empty() || !marlin_unsupported_reason(g.layer.w2).empty()) continue;
    ++supported;
    act_order += g.layer.problem.scheme.act_order ? 1 : 0;
  }
  EXPECT_GT(supported, 0) << "no golden layer case runs on Marlin: " << path;
  EXPECT_GT(act_order, 0) << "no act-order golden layer case runs on Marlin: " << path;
}

// The adapter's unsupported_reason decides which cases `moeval check` runs on Marlin and which it
// reports Skipped; it must refuse exactly the weights the kernel refuses, or a case the kernel
// could run goes unchecked (adapter too strict) or a supported case fails with the kernel's error
// (too lax). Over every weight scheme fixtures can build at these shapes (K 120, 192, 256 × N 96,
// 128 × group −1, 32, 128), the kernel is called with fake device pointers: its argument checks run
// before any device access, so "accepted" is the device check refusing the fake pointer.
enum class MarlinOrder { plain, act_order, k_shard };

struct AdapterCase {
  WeightType type;
  MarlinOrder order;
};

std::string adapter_case_name(const ::testing::TestParamInfo<AdapterCase>& param_info) {
  const MarlinOrder o = param_info.param.order;
  return std::string(to_string(param_info.param.type)) +
         (o == MarlinOrder::plain ? "_plain" : o == MarlinOrder::act_order ? "_actorder" : "_actorder_kshard");
}

class MarlinAdapterRefusals : public ::testing::TestWithParam<AdapterCase> {};

TEST_P(MarlinAdapterRefusals, AreTheKernelsOwn) {
  void* fake = reinterpret_cast<void*>(std::uintptr_t{1} << 20);
  const auto* ids = static_cast<const std::int32_t*>(fake);
  int compared = 0;
  for (const std::int64_t k : {120, 192, 256}) {
    for (const std::int64_t n : {96, 128}) {
      for (const int group : {kChannelwise, 32, 128}) {
        QuantizedWeights w;
        w.scheme.type = GetParam().type;
        w.scheme.group_size = group;
        w.scheme.act_order = GetParam().order != MarlinOrder::plain;
        w.scheme.is_k_full = GetParam().order != MarlinOrder::k_shard;
        w.experts = 4;
        w.k = k;
        w.n = n;
        w.k_shards = GetParam().order == MarlinOrder::k_shard ? 4 : 1;
        try {
          w.scheme.validate(w.global_k(), "adapter test");
        } catch (const InvalidProblem&) {
          continue;  // fixtures cannot build these weights: neither side is ever asked
        }
        kernels::MarlinMoeArgs args;
        args.a = fake;
        args.c = fake;
        args.weights.qweight = static_cast<const std::uint32_t*>(fake);
        args.weights.scales = fake;
        if (has_zero_point(w.scheme.type)) args.weights.zeros = static_cast<const std::uint32_t*>(fake);
        if (w.scheme.act_order) args.weights.g_idx = args.weights.perm = ids;
        args.weights.num_experts = int(w.experts);
        args.weights.type = to_marlin_weight_type(w.scheme.type);
        args.weights.group_size = group;
        args.weights.num_groups = int(w.groups());
        args.weights.act_order = w.scheme.act_order;
        args.weights.is_k_full = w.scheme.is_k_full;
        args.blocks = {ids, ids, ids, 64, 16, 8};
        args.shape = {n, k};
        args.top_k = 2;
        args.workspace = fake;
        args.workspace_bytes = std::size_t{1} << 30;
        std::string kernel_error;
        try {
          kernels::marlin_moe(args);
          kernel_error = "(no error)";
        } catch (const std::exception& e) {
          kernel_error = e.what();
        }
        ASSERT_NE(kernel_error.find("marlin_moe: "), std::string::npos) << kernel_error;
        const bool kernel_refuses = kernel_error.find("is not a pointer CUDA knows") == std::string::npos &&
                                    kernel_error.find("points to host memory") == std::string::npos;
        const std::string adapter_reason = marlin_unsupported_reason(w);
        EXPECT_EQ(!adapter_reason.empty(), kernel_refuses)
            << w.scheme.name() << " K " << k << " N " << n << ": adapter '" << adapter_reason << "', kernel '" << kernel_error << "'";
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, MarlinAdapterRefusals,
    ::testing::Values(AdapterCase{WeightType::uint4b8, MarlinOrder::plain}, AdapterCase{WeightType::uint4, MarlinOrder::plain},
                      AdapterCase{WeightType::uint8b128, MarlinOrder::plain}, AdapterCase{WeightType::uint8, MarlinOrder::plain},
                      AdapterCase{WeightType::uint4b8, MarlinOrder::act_order},
                      AdapterCase{WeightType::uint8b128, MarlinOrder::act_order},
                      AdapterCase{WeightType::uint4b8, MarlinOrder::k_shard},
                      AdapterCase{WeightType::uint8b128, MarlinOrder::k_shard}),
    adapter_case_name);

// Act-order on Marlin weights adds the gathered activations of the larger GEMM (M·topk rows of
// max(H, I) 16-bit values, as marlin_moe_workspace_bytes states) to the WNA16 layout's workspace.
TEST(MoeForwardWorkspace, MarlinActOrderAddsTheLargerGemmsGatherSpace) {
  for (const auto& [hidden, inter] : {std::pair<std::int64_t, std::int64_t>{512, 128}, {128, 512}}) {
    kernels::MoeForwardArgs args;
    args.shape = {24, hidden, inter, 16, 4};
    args.format = kernels::MoeWeightFormat::marlin;
    for (auto* w : {&args.marlin_w13, &args.marlin_w2}) {
      w->num_experts = 16;
      w->group_size = 64;
    }
    args.marlin_w13.num_groups = int(hidden / 64);
    args.marlin_w2.num_groups = int(inter / 64);
    ASSERT_EQ(kernels::choose_block_size(args.shape), 8);  // 24 · 4 / 16 = 6 slots per expert
    const std::size_t plain = kernels::moe_forward_workspace_bytes(args);
    EXPECT_EQ(plain, kernels::moe_forward_workspace_bytes(args.shape) + kernels::kMarlinSliceWorkspaceBytes)
        << "Marlin without act-order needs only the slice space of block_size 8";
    args.marlin_w13.act_order = args.marlin_w2.act_order = true;
    const std::size_t gather = std::size_t(24 * 4 * std::max(hidden, inter)) * 2;
    EXPECT_GE(kernels::moe_forward_workspace_bytes(args), plain + gather);
    EXPECT_LT(kernels::moe_forward_workspace_bytes(args), plain + gather + 512);  // 256-byte rounding only
  }
}

// The multi_gpu tier runs each problem of cross_device_problems() with its buffers on device 1
// while device 0 is current. Each Marlin kernel form runs one item height, so the list must give
// every block size the wgmma path's table picks (on the H200s of the two-GPU machine), and 8-row
// blocks for every weight type.
TEST(CrossDeviceCoverage, ProblemsReachEveryMarlinBlockSize) {
  std::set<int> blocks;
  std::set<WeightType> eight_row_types;
  for (const MoeProblem& p : cross_device_problems()) {
    const int block = kernels::choose_block_size({p.tokens, p.hidden, p.inter, int(p.experts), int(p.topk)},
                                                 kernels::MoeWeightFormat::marlin, true);
    blocks.insert(block);
    if (block == 8) eight_row_types.insert(p.scheme.type);
  }
  EXPECT_EQ(blocks, (std::set<int>{8, 16, 32, 64, 128}));
  EXPECT_EQ(eight_row_types.size(), 4u) << "every weight type at 8-row blocks";
}

}  // namespace
}  // namespace moeval::testbed
