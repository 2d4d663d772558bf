// Host-only facts of the Marlin integration (cpu tier): the registry lists the Marlin kernel, so
// `moeval check`, `sweep` and the golden GPU test run it; the golden corpus holds act-order cases
// it supports (which the WNA16 kernel cannot run); and moe_forward's workspace formula includes the
// act-order gather space.
#include <gtest/gtest.h>

#include <algorithm>

#include "moeval/golden/loader.h"
#include "moeval/kernels/moe_forward.h"
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

}  // namespace
}  // namespace moeval::testbed
