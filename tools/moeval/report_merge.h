// `moeval report merge`: the reports of the shards of one selection combined into the report a
// single run of that selection would have written (checks in selection order, summary recounted,
// shard 0/1) — the same up to timings, host names, and which device ran which check.
#pragma once

#include <filesystem>
#include <vector>

#include "run_report.h"

namespace moeval::cli {

// Each argument is a shard's report directory, or a directory holding shard-<i>-of-<n>
// subdirectories (what `check --out DIR --shard i/n` writes): those are taken in order. A
// directory that holds both a report and shard directories holds two runs: UsageError.
std::vector<std::filesystem::path> expand_report_dirs(const std::vector<std::filesystem::path>& dirs);

// Throws UsageError when the reports are not the shards of one selection run by one build:
// another moeval version or commit, matrix, filter, seed count, contract or job count; a shard
// missing or given twice; a check index outside the selection, in two shards, or twice in one.
// Each message names the directories involved. The reports are load_run's (validated) or built
// in memory by make_header.
RunReport merge_runs(const std::vector<RunReport>& runs, const std::vector<std::filesystem::path>& dirs);

}  // namespace moeval::cli
