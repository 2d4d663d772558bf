#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"moeval: proves quantized Mixture-of-Experts kernels right"};
  app.require_subcommand(1);
  std::map<std::string, moeval::cli::Runner> runners{
      {"check", moeval::cli::add_check_command(app)},
      {"golden", moeval::cli::add_golden_command(app)},
      {"sweep", moeval::cli::add_sweep_command(app)},
      {"bench", moeval::cli::add_bench_command(app)},
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return runners.at(app.get_subcommands().front()->get_name())();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moeval: error: %s\n", e.what());
    return 2;
  }
}
