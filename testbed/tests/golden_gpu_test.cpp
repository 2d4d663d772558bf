// The committed golden cases on the GPU: every case a kernel supports runs against the STORED
// expected output (not a fresh reference), so a kernel is pinned to the same numbers CI verifies.
#include <gtest/gtest.h>

#include "moeval/golden/loader.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/layer_runner.h"
#include "moeval/testbed/wna16_kernel.h"

namespace moeval::testbed {
namespace {

TEST(GoldenGpu, Wna16RunsEverySupportedGemmCaseAgainstTheStoredOutputs) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto kernel = make_wna16_kernel();
  int ran = 0, unsupported = 0;
  for (golden::Family family : golden::all_families()) {
    if (family == golden::Family::layer) continue;
    const auto path = golden::family_path(golden::default_golden_dir(), family);
    for (const std::string& name : golden::list_cases(path)) {
      const golden::GoldenGemmCase g = golden::load_gemm_case(path, name);
      if (!kernel->unsupported_reason(g.gemm).empty()) {
        ++unsupported;
        continue;
      }
      const CaseResult r = run_gemm_case(*kernel, g.gemm, 0, &g.expected);
      EXPECT_TRUE(r.pass()) << path.filename() << " " << name << "\n" << r.summary();
      ++ran;
    }
  }
  std::printf("golden GEMM cases: %d run on %s, %d not supported by it (act-order)\n", ran, kernel->name().c_str(), unsupported);
  EXPECT_GT(ran, 0);
}

TEST(GoldenGpu, LayerCasesStageByStage) {
  MOEVAL_REQUIRE_GPUS(1);
  const auto path = golden::family_path(golden::default_golden_dir(), golden::Family::layer);
  int ran = 0;
  for (const std::string& name : golden::list_cases(path)) {
    const golden::GoldenLayerCase g = golden::load_layer_case(path, name);
    if (g.layer.problem.scheme.act_order) continue;  // WNA16 has no act-order
    const LayerResult r = run_layer_case(g.layer, 0);
    EXPECT_TRUE(r.pass()) << name << "\n" << r.summary();
    ++ran;
  }
  EXPECT_GT(ran, 0);
}

}  // namespace
}  // namespace moeval::testbed
