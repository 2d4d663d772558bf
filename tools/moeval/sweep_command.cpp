// `moeval sweep`: the fleet view. The check matrix (matrix_run.h) with two seeds by default, each
// GEMM case on every device of the run (every visible GPU, or --device), every output compared
// with the first device's bit for bit: a device whose kernel disagrees with its peers is named
// even when each one passes its own reference check. Same selection and report options as check.
#include <memory>

#include "commands.h"
#include "matrix_run.h"

namespace moeval::cli {

Runner add_sweep_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Run the check matrix on every visible GPU with several seeds and compare "
                                          "every output bitwise across devices");
  auto options = std::make_shared<MatrixRunOptions>();
  options->command = "sweep";
  options->sweep = true;
  options->seeds = 2;
  add_matrix_options(*cmd, *options);
  return [options] { return run_matrix(*options, invocation()); };
}

}  // namespace moeval::cli
