#include "repro.h"

#include <cstdio>
#include <vector>

#include "k_group_attribution.h"
#include "moeval/golden/case_codec.h"
#include "moeval/golden/errors.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/layouts.h"
#include "moeval/golden/loader.h"
#include "moeval/golden/schema.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/kernel_under_test.h"

namespace moeval::cli {

std::filesystem::path write_gemm_repro(const std::filesystem::path& dir, const GemmCase& gemm_case,
                                       const reference::ReferenceOutput& expected) {
  std::vector<golden::Layout> layouts;
  for (golden::Layout l : {golden::Layout::wna16, golden::Layout::marlin, golden::Layout::gptq, golden::Layout::awq,
                           golden::Layout::compressed_tensors}) {
    if (golden::layout_applies(l, gemm_case.w.scheme, gemm_case.shape.k, gemm_case.shape.n)) layouts.push_back(l);
  }
  std::filesystem::create_directories(dir);
  const auto path = dir / (gemm_case.problem.name() + ".h5");
  golden::write_golden_file(path, golden::current_provenance(), "repro",
                            {golden::encode_gemm_case(gemm_case, expected, layouts)});
  return path;
}

std::vector<golden::GoldenGemmCase> load_repro(const std::filesystem::path& file) {
  const golden::GoldenReader reader(file);
  if (reader.case_names().empty()) throw golden::golden_error(file, "", "holds no case; nothing to replay");
  std::vector<golden::GoldenGemmCase> cases;
  for (const std::string& name : reader.case_names()) {
    const golden::CaseRecord record = reader.read_case(name);
    if (golden::decode_problem(record, file).kind == ProblemKind::layer) {
      throw golden::golden_error(file, "case '" + name + "'",
                                 "is a whole-layer case; --repro replays GEMM cases (layer cases run in the "
                                 "golden_gpu_tests)");
    }
    cases.push_back(golden::decode_gemm_case(record, file));
  }
  return cases;
}

ReplayCounts replay_repro(const std::vector<golden::GoldenGemmCase>& cases, int device) {
  ReplayCounts counts;
  testbed::register_builtin_kernels();
  for (const golden::GoldenGemmCase& g : cases) {
    const std::string name = g.gemm.problem.name();
    for (const auto& kernel : testbed::KernelRegistry::instance().all()) {
      if (const auto why = kernel->unsupported_reason(g.gemm); !why.empty()) {
        std::printf("SKIPPED  %s %s  unsupported: %s\n", kernel->name().c_str(), name.c_str(), why.c_str());
        ++counts.skipped;
        continue;
      }
      try {
        const auto r = testbed::run_gemm_case(*kernel, g.gemm, device, &g.expected);
        std::printf("%-8s %s\n", r.pass() ? "PASS" : "FAIL", r.summary().c_str());
        if (!r.pass() && r.output.size() == g.expected.y16.size()) {
          // The diagnose step that needs the case's inputs: which K-group's scales explain the errors.
          const KGroupAttribution groups = k_group_attribution(g.gemm, r.output, g.expected, g.gemm.problem.tier);
          std::printf("  K-groups: %s\n", groups.summary.c_str());
        }
        ++(r.pass() ? counts.passed : counts.failed);
      } catch (const std::exception& e) {
        std::printf("FAIL     %s %s  error: %s\n", kernel->name().c_str(), name.c_str(), e.what());
        ++counts.failed;
      }
    }
  }
  return counts;
}

}  // namespace moeval::cli
