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
#include "exit_codes.h"
#include "golden_check.h"
#include "plural.h"
#include "report_file.h"
#include "repro.h"
#include "validators.h"
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
  bool require_gpu = false;
  std::string golden_dir;
};

// Every result is printed (stdout is line-buffered) and added to the JSON report as it arrives.
struct Tally {
  int passed = 0, failed = 0, skipped = 0;
  nlohmann::json rows = nlohmann::json::array();
  ReportFile* report = nullptr;

  nlohmann::json json() const {
    return {{"passed", passed}, {"failed", failed}, {"skipped", skipped}, {"checks", rows}};
  }
  void record(const std::string& what, const std::string& status, const std::string& detail) {
    (status == "PASS" ? passed : status == "FAIL" ? failed : skipped) += 1;
    std::printf("%-8s %s%s%s\n", status.c_str(), what.c_str(), detail.empty() ? "" : "  ", detail.c_str());
    rows.push_back({{"check", what}, {"status", status}, {"detail", detail}});
    if (report) report->progress(json());
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
    std::printf("contract gpu%d %s: %s\n", device, kernel->name().c_str(), kernel->contract().name().c_str());
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
// The file is read and checked before any device is looked at: a file that is not a reproduce
// file is an input error (2), whatever the machine.
int run_replay(const CheckOptions& options) {
  const std::vector<golden::GoldenGemmCase> cases = load_repro(options.repro_file);
  const DevicePlan plan = plan_devices(options.devices);
  if (!plan.no_device.empty()) {
    throw NothingRan("no CUDA device (" + plan.no_device + "); " + count_of(long(cases.size()), "case") +
                     " of " + options.repro_file + " not replayed");
  }
  for (const std::string& why : plan.unusable) std::printf("SKIPPED  %s\n", why.c_str());
  if (plan.devices.empty()) throw NothingRan("no requested device can run this build; nothing was replayed");
  const ReplayCounts c = replay_repro(cases, plan.devices.front());
  std::printf("check: %d passed, %d failed, %d skipped\n", c.passed, c.failed, c.skipped);
  if (c.failed > 0) return kCheckFailed;
  if (c.passed == 0) {
    std::printf("moeval check --repro: no registered kernel supports these cases; nothing was replayed\n");
    return kNothingRan;
  }
  return kPass;
}

int run_check(const CheckOptions& options) {
  if (!options.repro_file.empty()) return run_replay(options);
  ReportFile report(options.json_path);  // an unwritable report path fails now, not after the run
  const DevicePlan plan = options.cpu_only ? DevicePlan{} : plan_devices(options.devices);
  Tally tally;
  tally.report = &report;
  const auto& visible = testbed::visible_devices();
  if (visible.count > 0) {
    std::printf("moeval check: %s visible\n", count_of(visible.count, "CUDA device").c_str());
  } else {
    std::printf("moeval check: no CUDA device: %s\n", describe_no_device(visible.reason).c_str());
  }
  report.progress(tally.json());

  // CPU tier: the golden corpus, regenerated with the CPU reference and diffed.
  const GoldenCheckOutcome golden = check_golden_corpus(options.golden_dir);
  for (const auto& line : golden.lines) tally.record(line.what, line.status, line.detail);

  // GPU tier.
  std::string gpu_missing;  // why (part of) the GPU tier did not run
  const std::string tier = "gpu tier (" + count_of(long(gemm_matrix().size()), "GEMM case") + ", " +
                           count_of(long(layer_matrix().size()), "layer case") + " per device)";
  if (options.cpu_only) {
    tally.record(tier, "SKIPPED", "--cpu-only");
    gpu_missing = "--cpu-only";
  } else if (!plan.no_device.empty()) {
    tally.record(tier, "SKIPPED", "no CUDA device: " + plan.no_device);
    gpu_missing = plan.no_device;
  } else {
    for (const std::string& why : plan.unusable) {
      tally.record(tier, "SKIPPED", why);
      gpu_missing = why;
    }
    for (int d : plan.devices) run_gpu_tier(d, options.repro_dir, tally);
  }

  std::printf("check: %d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
  report.finish(tally.json());
  if (tally.failed > 0) return kCheckFailed;
  if (options.require_gpu && !gpu_missing.empty()) {
    std::fprintf(stderr, "moeval check: --require-gpu: the GPU tier did not run: %s\n", gpu_missing.c_str());
    return kNothingRan;
  }
  return kPass;
}

}  // namespace

Runner add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Run the default check matrix: GPU kernels against the CPU reference on "
                                          "every device, and the CPU tier (golden corpus regenerated and diffed)");
  auto options = std::make_shared<CheckOptions>();
  cmd->add_option("--device", options->devices, "Devices to check, e.g. 0,1 (default: every visible device)")
      ->delimiter(',')
      ->check(integer_in(0, 1023));
  auto* json = cmd->add_option("--json", options->json_path,
                               "Also write the results as JSON to this file (rewritten as results arrive)");
  cmd->add_option("--golden-dir", options->golden_dir, "Golden data directory (default: the source tree's golden/data)");
  auto* cpu_only =
      cmd->add_flag("--cpu-only", options->cpu_only, "Run the CPU tier only (GPU checks are reported as skipped)");
  auto* require_gpu = cmd->add_flag("--require-gpu", options->require_gpu,
                                    "Exit 3 when the GPU tier (or part of it) could not run: no device, or a "
                                    "device this build cannot run on");
  require_gpu->excludes(cpu_only);
  auto* repro = cmd->add_option("--repro", options->repro_file,
                                "Replay the cases of a reproduce file instead of the matrix (needs a GPU)")
                    ->check(CLI::ExistingFile);
  repro->excludes(json)->excludes(cpu_only);
  cmd->add_option("--repro-dir", options->repro_dir, "Where failing cases are written (default: moeval-repro)");
  return [options] { return run_check(*options); };
}

}  // namespace moeval::cli
