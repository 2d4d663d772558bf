#include <cstdio>

#include "commands.h"

namespace moeval::cli {

Runner add_bench_command(CLI::App& app) {
  app.add_subcommand("bench", "Time our kernels against the cuBLAS reference path and the roofline");
  return [] {
    std::fprintf(stderr, "moeval bench: NOT YET IMPLEMENTED; nothing was run.\n");
    return 1;
  };
}

}  // namespace moeval::cli
