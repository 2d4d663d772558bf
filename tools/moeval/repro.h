// Self-contained reproduce files (DESIGN.md "Data flow of one check"): a failing GEMM case is
// written with its inputs, every applicable layout and the reference outputs, in the golden schema
// (one HDF5 file, one group); `moeval check --repro FILE` replays every case of such a file on
// every registered kernel against the stored outputs.
#pragma once

#include <filesystem>
#include <string>

#include "moeval/fixtures/cases.h"
#include "moeval/reference/reference_output.h"

namespace moeval::cli {

// Writes <dir>/<case name>.h5 atomically and returns its path.
std::filesystem::path write_gemm_repro(const std::filesystem::path& dir, const GemmCase& gemm_case,
                                       const reference::ReferenceOutput& expected);

struct ReplayCounts {
  int passed = 0, failed = 0, skipped = 0;
};

// Runs every case of `file` on every registered kernel on `device`, printing one line each.
ReplayCounts replay_repro(const std::filesystem::path& file, int device);

}  // namespace moeval::cli
