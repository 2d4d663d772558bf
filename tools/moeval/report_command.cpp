// `moeval report`: what to do with the report directories `moeval check --out` writes.
//   merge --out DIR SHARD_DIR...   the shards of one selection as the report one run would write
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"
#include "exit_codes.h"
#include "json_text.h"
#include "path_identity.h"
#include "plural.h"
#include "report_dir.h"
#include "report_merge.h"
#include "run_report.h"
#include "validators.h"

namespace moeval::cli {
namespace {

struct MergeOptions {
  std::string out;
  std::vector<std::string> dirs;
};

// results.jsonl of a finished report: header, the checks in order, the end line.
std::string as_lines(const RunReport& r) {
  std::string text = report_line(r.header, ReportLine::header);
  for (const nlohmann::json& c : r.checks) text += report_line(c, ReportLine::check);
  if (r.complete()) text += report_line(r.end, ReportLine::end);
  return text;
}

[[noreturn]] void refuse_out(const std::string& why) {
  throw UsageError("report merge: " + why + "; write the merged report elsewhere (nothing was written)");
}

// Whether `out`, below the given directory `input`, starts with a shard-* directory there: the
// next merge of `input` would take that directory for one of its shards.
bool below_as_a_shard(const std::filesystem::path& out, const std::filesystem::path& input) {
  if (!is_within(out, input) || same_path(out, input)) return false;
  const std::filesystem::path below = resolved(out).lexically_relative(resolved(input));
  return below.begin()->string().rfind("shard-", 0) == 0;
}

// --out is refused where the merged report would overwrite an input or be read as one: the same
// directory as an input (given, or a report directory found in one: `runs/shard-0-of-2`), inside
// a report directory, named shard-* inside a given directory, or around an input. Anywhere else
// it is harmless, `runs/merged` beside the shards included: a merge of `runs` reads only its
// shard-* directories. The report directories are looked at first, so the message names the
// directory --out collides with, not the one given that holds it.
void refuse_out_among_inputs(const std::filesystem::path& out, const std::vector<std::filesystem::path>& given,
                             const std::vector<std::filesystem::path>& report_dirs) {
  const std::string o = "--out '" + out.string() + "'";
  for (const auto* inputs : {&report_dirs, &given}) {
    for (const auto& input : *inputs) {
      if (same_path(out, input)) refuse_out(o + " is the input directory '" + input.string() + "'");
    }
  }
  for (const auto& dir : report_dirs) {
    if (is_within(out, dir)) refuse_out(o + " lies inside the input directory '" + dir.string() + "'");
  }
  for (const auto& input : given) {
    if (below_as_a_shard(out, input)) {
      refuse_out(o + " is named like a shard directory inside the input directory '" + input.string() +
                 "' (a later merge of it would take it for a shard)");
    }
  }
  for (const auto* inputs : {&given, &report_dirs}) {
    for (const auto& input : *inputs) {
      if (is_within(input, out)) refuse_out("the input directory '" + input.string() + "' lies inside " + o);
    }
  }
}

int run_merge(const MergeOptions& o) {
  const std::vector<std::filesystem::path> given(o.dirs.begin(), o.dirs.end());
  const std::vector<std::filesystem::path> dirs = expand_report_dirs(given);
  refuse_out_among_inputs(o.out, given, dirs);
  std::vector<RunReport> runs;
  for (const auto& d : dirs) runs.push_back(load_run(d));
  const RunReport merged = merge_runs(runs, dirs);
  const std::string lines = as_lines(merged);
  ReportDir::create(o.out);
  // As a run starts: the lines first, whole, and the previous report's derived files removed, so
  // the directory is the previous report or the new one at every moment (start_report_lines).
  const std::filesystem::path lines_path = std::filesystem::path(o.out) / "results.jsonl";
  try {
    ::close(start_report_lines(o.out, lines));
  } catch (const std::exception& e) {
    throw UsageError("cannot write the merged report '" + lines_path.string() + "': " + e.what());
  }
  write_final_files(o.out, merged);
  const nlohmann::json s = merged.summary();
  std::printf("report merge: %s into %s: %s passed, %s failed, %s skipped, %s not run%s\n",
              count_of(long(dirs.size()), "shard").c_str(), o.out.c_str(), s["passed"].dump().c_str(), s["failed"].dump().c_str(),
              s["skipped"].dump().c_str(), s["not_run"].dump().c_str(), merged.complete() ? "" : " (a shard did not finish)");
  if (s["failed"].get<long>() > 0) return kCheckFailed;
  // Exit 0 says everything required ran (docs/errors.md): a shard that was interrupted or killed
  // left checks unrun, which is exit 3 as for `check --require-gpu` without its GPU tier.
  if (const long not_run = s["not_run"].get<long>(); not_run > 0) {
    std::fprintf(stderr, "moeval report: %s of the selection did not run (a shard was interrupted or did not finish); "
                 "rerun those shards and merge again\n", count_of(not_run, "check").c_str());
    return kNothingRan;
  }
  // Every check there, but a shard without its end line: it died after its last check (at teardown,
  // or killed), so what ran cannot be told complete; not a pass either.
  if (!merged.complete()) {
    std::fprintf(stderr, "moeval report: a shard did not finish (its results.jsonl has no end line), though each check "
                 "of the selection is there; rerun that shard and merge again\n");
    return kNothingRan;
  }
  return kPass;
}

}  // namespace

Runner add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "Work with the report directories of `moeval check --out`");
  cmd->require_subcommand(1);
  auto merge = std::make_shared<MergeOptions>();
  auto* m = cmd->add_subcommand("merge", "Combine the reports of the shards of one selection into one report");
  m->add_option("--out", merge->out, "Directory of the merged report (not one of the inputs, nor inside or around one)")
      ->required()
      ->check(not_empty("a directory"));
  m->add_option("dirs", merge->dirs, "Shard report directories (or a directory holding shard-I-of-N directories)")
      ->required()
      ->check(not_empty("a report directory"));
  return [cmd, merge] {
    const std::string name = cmd->get_subcommands().front()->get_name();
    if (name == "merge") return run_merge(*merge);
    throw UsageError("report: unknown subcommand '" + name + "'");
  };
}

}  // namespace moeval::cli
