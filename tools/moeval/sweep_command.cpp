// `moeval sweep`: the check matrix on every visible GPU (or the ones named), with more seeds than
// `check`, and bitwise equality of every output across devices — the fleet view: a device whose
// kernel disagrees with its peers is named even when each one passes its own reference check.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "default_matrix.h"
#include "device_selection.h"
#include "exit_codes.h"
#include "plural.h"
#include "validators.h"
#include "report_file.h"
#include "moeval/fixtures/cases.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/kernel_under_test.h"

namespace moeval::cli {
namespace {

struct SweepOptions {
  std::vector<int> devices;
  int seeds = 2;
  std::string json_path;
};

struct SweepRow {
  int failed = 0;
  int disagreements = 0;
  nlohmann::json json;
};

// One case on every device: each against the shared reference, each output against the first
// device that produced one.
SweepRow sweep_case(const testbed::GemmKernelUnderTest& kernel, const GemmCase& c,
                    const reference::ReferenceOutput& reference, const std::vector<int>& devices) {
  SweepRow row;
  row.json = {{"kernel", kernel.name()}, {"case", c.problem.name()}, {"devices", nlohmann::json::object()}};
  std::optional<std::vector<std::uint16_t>> baseline;
  int baseline_device = -1;
  for (int d : devices) {
    std::string status;
    try {
      const auto r = testbed::run_gemm_case(kernel, c, d, &reference);
      status = r.pass() ? "PASS" : "FAIL: " + r.summary();
      if (!r.pass()) ++row.failed;
      if (!baseline) {
        baseline = r.output;
        baseline_device = d;
      } else if (r.output != *baseline) {
        ++row.disagreements;
        status += " (differs bitwise from device " + std::to_string(baseline_device) + ")";
      }
    } catch (const std::exception& e) {
      ++row.failed;
      status = std::string("FAIL: error: ") + e.what();
    }
    if (status != "PASS") std::printf("device %d %s %s: %s\n", d, kernel.name().c_str(), c.problem.name().c_str(), status.c_str());
    row.json["devices"][std::to_string(d)] = status;
  }
  return row;
}

int run_sweep(const SweepOptions& o) {
  ReportFile report(o.json_path);  // an unwritable report path fails now, not after the sweep
  const DevicePlan plan = plan_devices(o.devices);
  if (!plan.no_device.empty()) throw NothingRan("no CUDA device (" + plan.no_device + "); nothing was swept");
  for (const std::string& why : plan.unusable) std::printf("SKIPPED  %s\n", why.c_str());
  if (plan.devices.empty()) throw NothingRan("no requested device can run this build; nothing was swept");
  const std::vector<int>& devices = plan.devices;

  testbed::register_builtin_kernels();
  int cases = 0, failed = 0, unsupported = 0, disagreements = 0;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& kernel : testbed::KernelRegistry::instance().all()) {
    for (MoeProblem p : gemm_matrix()) {
      for (int seed = 0; seed < o.seeds; ++seed) {
        p.seed = 1000 + std::uint64_t(seed);
        const GemmCase c = build_gemm_case(p);
        if (!kernel->unsupported_reason(c).empty()) {
          ++unsupported;
          continue;
        }
        ++cases;
        const auto reference = reference::reference_gemm(c);
        const SweepRow row = sweep_case(*kernel, c, reference, devices);
        failed += row.failed;
        disagreements += row.disagreements;
        rows.push_back(row.json);
        report.progress(nlohmann::json{{"cases", cases}, {"failed", failed}, {"disagreements", disagreements}, {"rows", rows}});
      }
    }
  }
  std::printf("sweep: %s × %s; %d failed, %s, %d unsupported\n", count_of(cases, "case run").c_str(),
              count_of(long(devices.size()), "device").c_str(), failed,
              count_of(disagreements, "cross-device disagreement").c_str(), unsupported);
  report.finish(nlohmann::json{{"cases", cases}, {"failed", failed}, {"disagreements", disagreements}, {"rows", rows}});
  if (failed > 0 || disagreements > 0) return kCheckFailed;
  if (cases == 0) throw NothingRan("no registered kernel supports a case of the matrix; nothing was swept");
  if (!plan.unusable.empty()) return kNothingRan;  // part of the fleet could not run this build
  return kPass;
}

}  // namespace

Runner add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Run the check matrix on every visible GPU with several seeds and compare "
                                          "every output bitwise across devices");
  auto o = std::make_shared<SweepOptions>();
  cmd->add_option("--device", o->devices, "Devices to sweep, e.g. 0,1 (default: every visible device)")
      ->delimiter(',')
      ->check(integer_in(0, 1023));
  cmd->add_option("--seeds", o->seeds, "Seeds per matrix cell, 1 to 1000 (default 2)")->check(integer_in(1, 1000));
  cmd->add_option("--json", o->json_path, "Also write the results as JSON to this file");
  return [o] { return run_sweep(*o); };
}

}  // namespace moeval::cli
