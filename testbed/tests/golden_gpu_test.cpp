// The committed golden cases on the GPU: every case a registered kernel supports runs against the
// STORED expected output (not a fresh reference), so a kernel is pinned to the numbers CI verifies.
// Layer cases: GEMM1 against the stored output; the later stages consume the kernel's own
// intermediates, so their references are recomputed from those (docs/architecture.md, stage-wise checks).
#include <gtest/gtest.h>

#include <map>

#include "moeval/golden/loader.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/layer_runner.h"
#include "moeval/testbed/kernel_under_test.h"

namespace moeval::testbed {
namespace {

TEST(GoldenGpu, Wna16RunsEverySupportedGemmCaseAgainstTheStoredOutputs) {
  MOEVAL_REQUIRE_GPUS(1);
  register_builtin_kernels();
  for (const auto& kernel : KernelRegistry::instance().all()) {
    int ran = 0;
    std::map<std::string, int> unsupported;  // reason -> cases
    for (golden::Family family : golden::all_families()) {
      if (family == golden::Family::layer) continue;
      const auto path = golden::family_path(golden::default_golden_dir(), family);
      for (const std::string& name : golden::list_cases(path)) {
        const golden::GoldenGemmCase g = golden::load_gemm_case(path, name);
        if (const auto why = kernel->unsupported_reason(g.gemm); !why.empty()) {
          ++unsupported[why.substr(0, why.find(':'))];
          continue;
        }
        const CaseResult r = run_gemm_case(*kernel, g.gemm, 0, &g.expected);
        EXPECT_TRUE(r.pass()) << path.filename() << " " << name << "\n" << r.summary();
        ++ran;
      }
    }
    std::printf("golden GEMM cases on %s: %d run\n", kernel->name().c_str(), ran);
    for (const auto& [why, count] : unsupported) std::printf("  %d not supported: %s\n", count, why.c_str());
    EXPECT_GT(ran, 0);
  }
}

TEST(GoldenGpu, LayerCasesStageByStage) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto path = golden::family_path(golden::default_golden_dir(), golden::Family::layer);
  int ran = 0, act_order = 0;
  for (const std::string& name : golden::list_cases(path)) {
    const golden::GoldenLayerCase g = golden::load_layer_case(path, name);
    if (g.layer.problem.scheme.act_order) {  // the WNA16 layer has no act-order
      ++act_order;
      continue;
    }
    const LayerResult r = run_layer_case(g.layer, 0, &g.expected);
    EXPECT_TRUE(r.pass()) << name << "\n" << r.summary();
    ++ran;
  }
  std::printf("golden layer cases: %d run, %d act-order cases not supported by the WNA16 layer\n", ran, act_order);
  EXPECT_GT(ran, 0);
}

}  // namespace
}  // namespace moeval::testbed
