// `moeval check`: the default matrix. GPU kernels against the CPU reference on every visible device
// (or the ones named), and the CPU tier (golden corpus regenerated and diffed). Whatever cannot run
// here is listed as SKIPPED with the reason, never counted as passed.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "default_matrix.h"
#include "device_selection.h"
#include "golden_check.h"
#include "moeval/fixtures/cases.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/layer_runner.h"
#include "moeval/testbed/kernel_under_test.h"

namespace moeval::cli {
namespace {

struct CheckOptions {
  std::vector<int> devices;  // empty = every visible device
  std::string json_path;
  bool cpu_only = false;
  std::string golden_dir;
};

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
  nlohmann::json rows = nlohmann::json::array();

  void record(const std::string& what, const std::string& status, const std::string& detail) {
    (status == "PASS" ? passed : status == "FAIL" ? failed : skipped) += 1;
    std::printf("%-8s %s%s%s\n", status.c_str(), what.c_str(), detail.empty() ? "" : "  ", detail.c_str());
    rows.push_back({{"check", what}, {"status", status}, {"detail", detail}});
  }
};

// One GEMM case on one kernel and device, recorded as PASS, FAIL or SKIPPED (unsupported).
void check_gemm_case(const testbed::GemmKernelUnderTest& kernel, const MoeProblem& p, int device, Tally& tally) {
  const std::string what = "gpu" + std::to_string(device) + " " + kernel.name() + " " + p.name();
  try {
    const GemmCase c = build_gemm_case(p);
    if (auto why = kernel.unsupported_reason(c); !why.empty()) {
      tally.record(what, "SKIPPED", "unsupported: " + why);
      return;
    }
    const auto r = testbed::run_gemm_case(kernel, c, device);
    tally.record(what, r.pass() ? "PASS" : "FAIL", r.pass() ? "" : r.summary());
  } catch (const std::exception& e) {
    tally.record(what, "FAIL", std::string("error: ") + e.what());
  }
}

// Every registered GEMM kernel over the GEMM matrix, then the whole layer (moe_forward).
void run_gpu_tier(int device, Tally& tally) {
  testbed::register_builtin_kernels();
  for (const auto& kernel : testbed::KernelRegistry::instance().all()) {
    for (const MoeProblem& p : gemm_matrix()) check_gemm_case(*kernel, p, device, tally);
  }
  for (const MoeProblem& p : layer_matrix()) {
    const std::string what = "gpu" + std::to_string(device) + " moe_forward " + p.name();
    try {
      const auto r = testbed::run_layer_case(build_layer_case(p), device);
      tally.record(what, r.pass() ? "PASS" : "FAIL", r.pass() ? "" : r.summary());
    } catch (const std::exception& e) {
      tally.record(what, "FAIL", std::string("error: ") + e.what());
    }
  }
}

int run_check(const CheckOptions& options) {
  Tally tally;
  const auto& visible = testbed::visible_devices();
  const std::vector<int> devices = validated_devices(options.devices);
  std::printf("moeval check: %d CUDA device(s) visible%s%s\n", visible.count, visible.reason.empty() ? "" : ": ",
              visible.reason.c_str());

  // CPU tier: the golden corpus, regenerated with the CPU reference and diffed.
  const GoldenCheckOutcome golden = check_golden_corpus(options.golden_dir);
  for (const auto& line : golden.lines) tally.record(line.what, line.status, line.detail);

  // GPU tier.
  if (options.cpu_only) {
    tally.record("gpu tier", "SKIPPED", "--cpu-only");
  } else if (visible.count == 0) {
    tally.record("gpu tier (WNA16 GEMM matrix of " + std::to_string(gemm_matrix().size()) + " cases, " +
                     std::to_string(layer_matrix().size()) + " layer cases)",
                 "SKIPPED", "no CUDA device: " + visible.reason);
  } else {
    for (int d : devices) run_gpu_tier(d, tally);
  }

  std::printf("check: %d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
  if (!options.json_path.empty()) {
    write_json_file(options.json_path, nlohmann::json{{"passed", tally.passed}, {"failed", tally.failed},
                                                      {"skipped", tally.skipped}, {"checks", tally.rows}});
  }
  return tally.failed == 0 ? 0 : 1;
}

}  // namespace

Runner add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Run the default check matrix: GPU kernels against the CPU reference on "
                                          "every device, and the CPU tier (golden corpus regenerated and diffed)");
  auto options = std::make_shared<CheckOptions>();
  cmd->add_option("--device", options->devices, "Devices to check (default: every visible device)");
  cmd->add_option("--json", options->json_path, "Also write the results as JSON to this file");
  cmd->add_option("--golden-dir", options->golden_dir, "Golden data directory (default: the source tree's golden/data)");
  cmd->add_flag("--cpu-only", options->cpu_only, "Run the CPU tier only (GPU checks are reported as skipped)");
  return [options] { return run_check(*options); };
}

}  // namespace moeval::cli
