#include <cstdio>

#include "commands.h"

namespace moeval::cli {

Runner add_sweep_command(CLI::App& app) {
  app.add_subcommand("sweep", "Run the check matrix on every visible GPU and compare devices bitwise");
  return [] {
    std::fprintf(stderr, "moeval sweep: NOT YET IMPLEMENTED; nothing was run.\n");
    return 1;
  };
}

}  // namespace moeval::cli
