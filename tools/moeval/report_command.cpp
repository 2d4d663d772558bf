// `moeval report`: what to do with the report directories `moeval check --out` writes.
//   merge --out DIR SHARD_DIR...   the shards of one selection as the report one run would write
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "commands.h"
#include "exit_codes.h"
#include "plural.h"
#include "report_dir.h"
#include "report_merge.h"
#include "run_report.h"
#include "moeval/golden/atomic_write.h"

namespace moeval::cli {
namespace {

struct MergeOptions {
  std::string out;
  std::vector<std::string> dirs;
};

// results.jsonl of a finished report: header, the checks in order, the end line.
std::string as_lines(const RunReport& r) {
  nlohmann::json header = r.header;
  header["type"] = "header";
  std::string text = header.dump() + "\n";
  for (nlohmann::json c : r.checks) {
    c["type"] = "check";
    text += c.dump() + "\n";
  }
  if (r.complete()) {
    nlohmann::json end = r.end;
    end["type"] = "end";
    text += end.dump() + "\n";
  }
  return text;
}

int run_merge(const MergeOptions& o) {
  std::vector<std::filesystem::path> given(o.dirs.begin(), o.dirs.end());
  const std::vector<std::filesystem::path> dirs = expand_report_dirs(given);
  std::vector<RunReport> runs;
  for (const auto& d : dirs) runs.push_back(load_run(d));
  const RunReport merged = merge_runs(runs, dirs);
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) throw UsageError("cannot write the report directory '" + o.out + "': " + ec.message());
  golden::replace_atomically(std::filesystem::path(o.out) / "results.jsonl", [&](const std::filesystem::path& temp) {
    std::ofstream(temp, std::ios::binary) << as_lines(merged);
  });
  write_final_files(o.out, merged);
  const nlohmann::json s = merged.summary();
  std::printf("report merge: %s into %s: %s passed, %s failed, %s skipped, %s not run%s\n",
              count_of(long(dirs.size()), "shard").c_str(), o.out.c_str(), s["passed"].dump().c_str(), s["failed"].dump().c_str(),
              s["skipped"].dump().c_str(), s["not_run"].dump().c_str(), merged.complete() ? "" : " (a shard did not finish)");
  return s["failed"].get<long>() > 0 ? kCheckFailed : kPass;
}

}  // namespace

Runner add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "Work with the report directories of `moeval check --out`");
  cmd->require_subcommand(1);
  auto merge = std::make_shared<MergeOptions>();
  auto* m = cmd->add_subcommand("merge", "Combine the reports of the shards of one selection into one report");
  m->add_option("--out", merge->out, "Directory of the merged report")->required();
  m->add_option("dirs", merge->dirs, "Shard report directories (or a directory holding shard-I-of-N directories)")
      ->required();
  return [cmd, merge] {
    const std::string name = cmd->get_subcommands().front()->get_name();
    if (name == "merge") return run_merge(*merge);
    throw UsageError("report: unknown subcommand '" + name + "'");
  };
}

}  // namespace moeval::cli
