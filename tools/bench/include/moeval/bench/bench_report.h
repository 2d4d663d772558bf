// The bench's outputs: a fixed-width table for people and JSON for tools.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "moeval/bench/bench_cell.h"
#include "moeval/bench/ceilings.h"

namespace moeval::bench {

struct BenchRun {
  std::string device;       // name reported by CUDA
  std::string command;      // the command line that produced it
  Ceilings ceilings;
  L2Flush l2_flush = L2Flush::clean;  // how every timed run of it began
  CellOptions options;                // what every cell ran with (the JSON's "options": forced choices)
  std::vector<CellResult> cells;
};

// One line per cell: times in µs, ours/roofline as a fraction (1 = at the roofline), and the
// cuBLAS path's time over ours (> 1: we are faster).
std::string format_table(const BenchRun& run);
nlohmann::json to_json(const BenchRun& run);

}  // namespace moeval::bench
