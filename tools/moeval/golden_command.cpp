// `moeval golden`: regenerate the golden corpus with the CPU reference and diff it against the
// committed files (--check, the default), or rewrite them atomically (--update [--case NAME]).
// Exit code (exit_codes.h): 0 identical / updated, 1 differences, 2 unreadable or unwritable files
// (a full disk included) or bad arguments.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "exit_codes.h"
#include "plural.h"
#include "validators.h"
#include "moeval/golden/check.h"
#include "moeval/golden/loader.h"

namespace moeval::cli {
namespace {

struct GoldenOptions {
  bool check = false;
  bool update = false;
  std::string case_name;
  std::string dir;
  std::vector<std::string> families;
  std::size_t max_lines = 40;  // differences printed per family
};

void print_differences(const std::vector<golden::Difference>& diffs, std::size_t max_lines) {
  for (std::size_t i = 0; i < diffs.size() && i < max_lines; ++i)
    std::printf("    %s\n", golden::format(diffs[i]).c_str());
  if (diffs.size() > max_lines) std::printf("    ... and %zu more\n", diffs.size() - max_lines);
}

// One family's summary line; returns its exit status (0, 1 or 2).
int report(const golden::FamilyReport& r, bool update, std::size_t max_lines) {
  const std::string file = r.path.filename().string();
  if (r.stale_temps_removed > 0) {
    std::printf("  %s: removed %s left by an interrupted update\n", file.c_str(),
                count_of(r.stale_temps_removed, "temp file").c_str());
  }
  if (r.error) {
    std::printf("  %s: ERROR: %s\n", file.c_str(), r.error->c_str());
    return 2;
  }
  if (update) {
    std::printf("  %s: %s, %s regenerated in %.1f s\n", file.c_str(), r.rewritten ? "rewritten" : "unchanged",
                count_of(long(r.cases), "case").c_str(), r.seconds);
    if (r.replaced_unreadable) std::printf("    the old file could not be read: %s\n", r.replaced_unreadable->c_str());
    print_differences(r.differences, max_lines);
    return kPass;
  }
  const std::size_t differing = golden::differing_cases(r.differences);
  const std::string verdict =
      differing == 0 ? count_of(long(r.cases), "case") + " identical"
                     : std::to_string(differing) + " of " + count_of(long(r.cases), "case") +
                           (differing == 1 ? " DIFFERS" : " DIFFER");
  std::printf("  %s: %s (%s; regenerated in %.1f s)\n", file.c_str(), verdict.c_str(), r.stored_provenance.c_str(),
              r.seconds);
  print_differences(r.differences, max_lines);
  return r.differences.empty() ? kPass : kCheckFailed;
}

int run_golden(const GoldenOptions& o) {
  golden::CorpusSelection selection;
  selection.case_name = o.case_name;
  for (const std::string& f : o.families) selection.families.push_back(golden::parse_family(f));
  golden::require_known_case(selection);
  const std::filesystem::path dir = o.dir.empty() ? golden::default_golden_dir() : std::filesystem::path(o.dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw UsageError("golden directory '" + dir.string() + "' " +
                     (std::filesystem::exists(dir, ec) ? "is not a directory" : "does not exist") +
                     (o.dir.empty() ? " ($MOEVAL_GOLDEN_DIR or the compiled-in default; pass --dir)" : ""));
  }

  std::printf("moeval golden --%s: %s\n", o.update ? "update" : "check", dir.c_str());
  const std::vector<golden::FamilyReport> reports =
      o.update ? golden::update_corpus(dir, selection) : golden::check_corpus(dir, selection);
  int status = 0;
  double seconds = 0;
  for (const golden::FamilyReport& r : reports) {
    status = worse(status, report(r, o.update, o.max_lines));
    seconds += r.seconds;
  }
  const char* verdict = status == 0
                            ? (o.update ? "golden files up to date" : "golden check passed: every case identical")
                        : status == 1 ? "golden check FAILED: differences listed above"
                                      : "golden FAILED: files could not be read or written";
  std::printf("%s (%.1f s)\n", verdict, seconds);
  return status;
}

}  // namespace

Runner add_golden_command(CLI::App& app) {
  auto options = std::make_shared<GoldenOptions>();
  auto* cmd = app.add_subcommand("golden",
                                 "Regenerate golden cases with the CPU reference and diff (--check) or "
                                 "rewrite them (--update)");
  auto* check = cmd->add_flag("--check", options->check, "Regenerate in memory and diff against the files (default)");
  auto* update = cmd->add_flag("--update", options->update, "Rewrite changed files atomically and print what changed");
  check->excludes(update);
  cmd->add_option("--case", options->case_name, "Only this case (its group name in the family file)");
  cmd->add_option("--dir", options->dir,
                  "Directory of the *.h5 files (default: $MOEVAL_GOLDEN_DIR, else the source tree's golden/data)");
  cmd->add_option("--family", options->families, "Only these families (wna16, marlin, layouts, layer)");
  cmd->add_option("--max-lines", options->max_lines, "Differences printed per family (default 40)")
      ->check(integer_in(0, 1000000));
  return [options] { return run_golden(*options); };
}

}  // namespace moeval::cli
