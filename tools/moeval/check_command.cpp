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
#include "repro.h"
#include "moeval/fixtures/cases.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/layer_runner.h"
#include "moeval/testbed/kernel_under_test.h"

namespace moeval::cli {
namespace {

struct CheckOptions {
  std::vector<int> devices;  // empty = every visible device
  std::string repro_file;    // replay this file instead of the matrix
  std::string repro_dir = "moeval-repro";  // where failing cases are written
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

// One GEMM case on one kernel and device, recorded as PASS, FAIL or SKIPPED (unsupported). A
// failing case is written as a reproduce file.
void check_gemm_case(const testbed::GemmKernelUnderTest& kernel, const MoeProblem& p, int device,
                     const std::string& repro_dir, Tally& tally) {
  const std::string what = "gpu" + std::to_string(device) + " " + kernel.name() + " " + p.name();
  try {
    const GemmCase c = build_gemm_case(p);
    if (auto why = kernel.unsupported_reason(c); !why.empty()) {
      tally.record(what, "SKIPPED", "unsupported: " + why);
      return;
    }
    const auto reference = reference::reference_gemm(c);
    const auto r = testbed::run_gemm_case(kernel, c, device, &reference);
    if (r.pass()) {
      tally.record(what, "PASS", "");
    } else {
      const auto repro = write_gemm_repro(repro_dir, c, reference);
      tally.record(what, "FAIL", r.summary() + "\n  reproduce: moeval check --repro " + repro.string());
    }
  } catch (const std::exception& e) {
    tally.record(what, "FAIL", std::string("error: ") + e.what());
  }
}

// Every registered GEMM kernel over the GEMM matrix, then the whole layer (moe_forward).
void run_gpu_tier(int device, const std::string& repro_dir, Tally& tally) {
  testbed::register_builtin_kernels();
  for (const auto& kernel : testbed::KernelRegistry::instance().all()) {
    for (const MoeProblem& p : gemm_matrix()) check_gemm_case(*kernel, p, device, repro_dir, tally);
  }
  for (const LayerCheck& l : layer_matrix()) {
    const std::string what = "gpu" + std::to_string(device) + " " + l.label + " " + l.problem.name();
    try {
      const auto r = testbed::run_layer_case(build_layer_case(l.problem), device, nullptr, l.format);
      tally.record(what, r.pass() ? "PASS" : "FAIL", r.pass() ? "" : r.summary());
    } catch (const std::exception& e) {
      tally.record(what, "FAIL", std::string("error: ") + e.what());
    }
  }
}

// --repro FILE: the file's cases on every registered kernel, first requested (or visible) device.
int run_replay(const CheckOptions& options) {
  const std::vector<int> devices = validated_devices(options.devices);
  if (devices.empty()) {
    std::printf("moeval check --repro: SKIPPED, no CUDA device (%s); nothing was replayed\n",
                testbed::visible_devices().reason.c_str());
    return 1;
  }
  const ReplayCounts c = replay_repro(options.repro_file, devices.front());
  std::printf("check: %d passed, %d failed, %d skipped\n", c.passed, c.failed, c.skipped);
  return c.failed == 0 && c.passed > 0 ? 0 : 1;
}

int run_check(const CheckOptions& options) {
  if (!options.repro_file.empty()) return run_replay(options);
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
    for (int d : devices) run_gpu_tier(d, options.repro_dir, tally);
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
  cmd->add_option("--repro", options->repro_file, "Replay the cases of a reproduce file instead of the matrix")
      ->check(CLI::ExistingFile);
  cmd->add_option("--repro-dir", options->repro_dir, "Where failing cases are written (default: moeval-repro)");
  return [options] { return run_check(*options); };
}

}  // namespace moeval::cli
