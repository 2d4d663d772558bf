#include <cstdio>

#include "commands.h"

namespace moeval::cli {

Runner add_golden_command(CLI::App& app) {
  app.add_subcommand("golden", "Regenerate golden cases with the CPU reference and diff (--check) or rewrite them (--update)");
  return [] {
    std::fprintf(stderr, "moeval golden: NOT YET IMPLEMENTED; nothing was run.\n");
    return 1;
  };
}

}  // namespace moeval::cli
