// `moeval sweep`: the check matrix on every visible GPU (or the ones named), with more seeds than
// `check`, and bitwise equality of every output across devices — the fleet view: a device whose
// kernel disagrees with its peers is named even when each one passes its own reference check.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "default_matrix.h"
#include "moeval/fixtures/cases.h"
#include "moeval/reference/gemm_reference.h"
#include "moeval/testbed/case_runner.h"
#include "moeval/testbed/devices.h"
#include "moeval/testbed/wna16_kernel.h"

namespace moeval::cli {
namespace {

struct SweepOptions {
  std::vector<int> devices;
  int seeds = 2;
  std::string json_path;
};

int run_sweep(const SweepOptions& o) {
  const auto& visible = testbed::visible_devices();
  std::vector<int> devices = o.devices;
  if (devices.empty()) {
    for (int d = 0; d < visible.count; ++d) devices.push_back(d);
  }
  if (devices.empty()) {
    std::printf("moeval sweep: SKIPPED, no CUDA device (%s); nothing was checked\n", visible.reason.c_str());
    return 1;  // a sweep that checked nothing must not look green
  }
  for (int d : devices) {
    if (d < 0 || d >= visible.count) {
      throw std::invalid_argument("--device " + std::to_string(d) + " does not exist; visible devices: 0.." +
                                  std::to_string(visible.count - 1));
    }
  }
  if (o.seeds < 1) throw std::invalid_argument("--seeds must be at least 1");

  const auto kernel = testbed::make_wna16_kernel();
  int cases = 0, failed = 0, unsupported = 0, disagreements = 0;
  nlohmann::json rows = nlohmann::json::array();
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
      std::vector<std::uint16_t> first;
      nlohmann::json row{{"case", p.name()}, {"devices", nlohmann::json::object()}};
      for (int d : devices) {
        std::string status;
        try {
          const auto r = testbed::run_gemm_case(*kernel, c, d, &reference);
          status = r.pass() ? "PASS" : "FAIL: " + r.summary();
          if (!r.pass()) ++failed;
          if (first.empty()) {
            first = r.output;
          } else if (r.output != first) {
            ++disagreements;
            status += " (differs bitwise from device " + std::to_string(devices.front()) + ")";
          }
        } catch (const std::exception& e) {
          ++failed;
          status = std::string("FAIL: error: ") + e.what();
        }
        if (status != "PASS") std::printf("device %d %s: %s\n", d, p.name().c_str(), status.c_str());
        row["devices"][std::to_string(d)] = status;
      }
      rows.push_back(row);
    }
  }
  std::printf("sweep: %d cases × %zu device(s) with %s; %d failed, %d cross-device disagreements, %d unsupported\n",
              cases, devices.size(), kernel->name().c_str(), failed, disagreements, unsupported);
  if (!o.json_path.empty()) {
    std::ofstream(o.json_path) << nlohmann::json{{"cases", cases}, {"failed", failed},
                                                 {"disagreements", disagreements}, {"rows", rows}}
                                      .dump(2);
  }
  return failed == 0 && disagreements == 0 ? 0 : 1;
}

}  // namespace

Runner add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Run the check matrix on every visible GPU with several seeds and compare "
                                          "every output bitwise across devices");
  auto o = std::make_shared<SweepOptions>();
  cmd->add_option("--device", o->devices, "Devices to sweep (default: every visible device)");
  cmd->add_option("--seeds", o->seeds, "Seeds per matrix cell (default 2)");
  cmd->add_option("--json", o->json_path, "Also write the results as JSON to this file");
  return [o] { return run_sweep(*o); };
}

}  // namespace moeval::cli
