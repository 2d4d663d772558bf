// Subcommands of the `moeval` CLI. Each registers its options on the app and returns the
// process exit code when run: 0 all checks passed, 1 a check failed, 2 bad usage or input.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace moeval::cli {

using Runner = std::function<int()>;

// The command line as typed (argv joined by spaces), for reports; set once by main().
void set_invocation(int argc, char** argv);
const std::string& invocation();

Runner add_check_command(CLI::App& app);
Runner add_golden_command(CLI::App& app);
Runner add_sweep_command(CLI::App& app);
Runner add_bench_command(CLI::App& app);
Runner add_report_command(CLI::App& app);
Runner add_show_command(CLI::App& app);

}  // namespace moeval::cli
