// What `moeval check` and `moeval sweep` share: a named matrix (--matrix, default standard)
// selected with --filter, multiplied by --seeds, split with --shard, run by one worker per device,
// reported as lines, --json and --out DIR (docs/reports.md). Whatever cannot run here is SKIPPED
// with the reason, never counted as passed.
//   check: each GEMM case on one device, the few cross-device jobs, the layers, the golden families.
//   sweep: each GEMM case on every device of the run with bitwise agreement across them, the
//          layers; a GPU is required (exit 3 without one).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace moeval::cli {

struct MatrixRunOptions {
  std::string command = "check";  // the subcommand ("check" or "sweep"): its lines and messages say it
  bool sweep = false;
  std::vector<int> devices;       // empty = every visible device
  std::string repro_dir = "moeval-repro";  // where failing cases are written
  bool repro_dir_given = false;            // --repro-dir was on the command line: checked before the run
  std::string json_path;
  std::string out_dir;
  std::string matrix = "standard";
  std::vector<std::string> filters;
  int seeds = 1;
  std::string shard;
  bool list = false;
  bool cpu_only = false;
  bool require_gpu = false;
  std::string golden_dir;
};

// The options add_matrix_options registers (for excludes()).
struct MatrixOptionHandles {
  CLI::Option* device = nullptr;
  CLI::Option* matrix = nullptr;
  CLI::Option* filter = nullptr;
  CLI::Option* seeds = nullptr;
  CLI::Option* shard = nullptr;
  CLI::Option* list = nullptr;
  CLI::Option* out = nullptr;
  CLI::Option* json = nullptr;
  CLI::Option* repro_dir = nullptr;
};

// --device, --matrix, --filter, --seeds, --shard, --list, --out, --json and --repro-dir.
MatrixOptionHandles add_matrix_options(CLI::App& cmd, MatrixRunOptions& options);

// Runs the selection; the exit code of docs/errors.md. `command` is the command line for reports.
int run_matrix(const MatrixRunOptions& options, const std::string& command);

}  // namespace moeval::cli
