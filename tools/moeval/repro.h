// Self-contained reproduce files: a failing GEMM case is written with its inputs, every applicable layout and the reference outputs, in the golden schema
// (one HDF5 file, one group); `moeval check --repro FILE` replays every case of such a file on
// every registered kernel against the stored outputs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "moeval/fixtures/cases.h"
#include "moeval/golden/case_codec.h"
#include "moeval/reference/reference_output.h"

namespace moeval::cli {

// Writes <dir>/<case name>.h5 atomically and returns its path.
std::filesystem::path write_gemm_repro(const std::filesystem::path& dir, const GemmCase& gemm_case,
                                       const reference::ReferenceOutput& expected);

struct ReplayCounts {
  int passed = 0, failed = 0, skipped = 0;
};

// Reads every case of a reproduce file (no device needed). Throws GoldenError naming the file and
// what is wrong: missing, not HDF5, truncated, another schema, a golden family file (which holds
// cases a kernel replays the same way, so it is accepted), no case at all, a case that is not a GEMM
// case or does not decode.
std::vector<golden::GoldenGemmCase> load_repro(const std::filesystem::path& file);

// Runs every case on every registered kernel on `device`, printing one line each.
ReplayCounts replay_repro(const std::vector<golden::GoldenGemmCase>& cases, int device);

}  // namespace moeval::cli
