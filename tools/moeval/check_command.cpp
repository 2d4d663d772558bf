// `moeval check`: a named matrix of GPU kernels against the reference (matrix_run.h), and the CPU
// tier (golden families regenerated and diffed); or, with --repro FILE, the cases of a reproduce
// file replayed on one device.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "device_selection.h"
#include "exit_codes.h"
#include "matrix_run.h"
#include "plural.h"
#include "repro.h"
#include "validators.h"

namespace moeval::cli {
namespace {

struct CheckOptions {
  MatrixRunOptions run;
  std::string repro_file;  // replay this file instead of the matrix
};

// --repro FILE: the file's cases on every registered kernel, first requested (or visible) device.
// The file is read and checked before any device is looked at: a file that is not a reproduce
// file is an input error (2), whatever the machine.
int run_replay(const CheckOptions& options) {
  const std::vector<golden::GoldenGemmCase> cases = load_repro(options.repro_file);
  const DevicePlan plan = plan_devices(options.run.devices);
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

}  // namespace

Runner add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Run a check matrix: GPU kernels against the reference, one worker per "
                                          "device, and the CPU tier (golden corpus regenerated and diffed)");
  auto options = std::make_shared<CheckOptions>();
  const MatrixOptionHandles h = add_matrix_options(*cmd, options->run);
  auto* golden_dir = cmd->add_option("--golden-dir", options->run.golden_dir,
                                     "Golden data directory (default: $MOEVAL_GOLDEN_DIR, else the source tree's golden/data)")
                         ->check(not_empty("a directory"));
  auto* cpu_only =
      cmd->add_flag("--cpu-only", options->run.cpu_only, "Run the CPU tier only (GPU checks are reported as skipped)");
  auto* require_gpu = cmd->add_flag("--require-gpu", options->run.require_gpu,
                                    "Exit 3 when the GPU tier (or part of it) could not run: no device, or a "
                                    "device this build cannot run on");
  require_gpu->excludes(cpu_only);
  auto* repro = cmd->add_option("--repro", options->repro_file,
                                "Replay the cases of a reproduce file instead of the matrix (needs a GPU; takes --device "
                                "only)")
                    ->check(not_empty("a reproduce file"))
                    ->check(CLI::ExistingFile);
  // A replay runs the file's cases, not a selection: an option it would ignore is refused.
  for (CLI::Option* ignored : {h.json, h.out, h.matrix, h.filter, h.seeds, h.shard, h.list, h.repro_dir, golden_dir, cpu_only}) {
    repro->excludes(ignored);
  }
  return [options] {
    if (!options->repro_file.empty()) return run_replay(*options);
    return run_matrix(options->run, invocation());
  };
}

}  // namespace moeval::cli
