// `moeval check`: the default matrix. GPU kernels against the CPU reference on every visible device
// (or the ones named), and the CPU tier (golden corpus regenerated and diffed). Whatever cannot run
// here is listed as SKIPPED with the reason, never counted as passed.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "commands.h"
#include "default_matrix.h"
#include "golden_check.h"
#include "moeval/fixtures/cases.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/layer_runner.h"
#include "moeval/testbed/wna16_kernel.h"

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

void run_gpu_tier(int device, Tally& tally) {
  const auto kernel = testbed::make_wna16_kernel();
  for (const MoeProblem& p : gemm_matrix()) {
    const std::string what = "gpu" + std::to_string(device) + " " + kernel->name() + " " + p.name();
    try {
      const GemmCase c = build_gemm_case(p);
      if (auto why = kernel->unsupported_reason(c); !why.empty()) {
        tally.record(what, "SKIPPED", "unsupported: " + why);
        continue;
      }
      const auto r = testbed::run_gemm_case(*kernel, c, device);
      tally.record(what, r.pass() ? "PASS" : "FAIL", r.pass() ? "" : r.summary());
    } catch (const std::exception& e) {
      tally.record(what, "FAIL", std::string("error: ") + e.what());
    }
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
  std::printf("moeval check: %d CUDA device(s) visible%s%s\n", visible.count, visible.reason.empty() ? "" : ": ",
              visible.reason.c_str());

  // CPU tier: the golden corpus, regenerated with the CPU reference and diffed.
  const GoldenCheckOutcome golden = check_golden_corpus(options.golden_dir);
  for (const auto& line : golden.lines) tally.record(line.what, line.status, line.detail);

  // GPU tier.
  std::vector<int> devices = options.devices;
  if (devices.empty()) {
    for (int d = 0; d < visible.count; ++d) devices.push_back(d);
  }
  if (options.cpu_only) {
    tally.record("gpu tier", "SKIPPED", "--cpu-only");
  } else if (visible.count == 0) {
    tally.record("gpu tier (WNA16 GEMM matrix of " + std::to_string(gemm_matrix().size()) + " cases, " +
                     std::to_string(layer_matrix().size()) + " layer cases)",
                 "SKIPPED", "no CUDA device: " + visible.reason);
  } else {
    for (int d : devices) {
      if (d < 0 || d >= visible.count) {
        throw std::invalid_argument("--device " + std::to_string(d) + " does not exist; visible devices: 0.." +
                                    std::to_string(visible.count - 1));
      }
      run_gpu_tier(d, tally);
    }
  }

  std::printf("check: %d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
  if (!options.json_path.empty()) {
    std::ofstream(options.json_path) << nlohmann::json{{"passed", tally.passed}, {"failed", tally.failed},
                                                       {"skipped", tally.skipped}, {"checks", tally.rows}}
                                            .dump(2);
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
