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
#include "golden_check.h"
#include "plural.h"
#include "stop_signal.h"
#include "validators.h"
#include "moeval/golden/check.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/h5.h"
#include "moeval/golden/loader.h"
#include "moeval/golden/schema.h"

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
    const char* what = r.restamped ? "restamped" : r.rewritten ? "rewritten" : "unchanged";
    std::printf("  %s: %s, %s regenerated in %.1f s\n", file.c_str(), what, count_of(long(r.cases), "case").c_str(),
                r.seconds);
    if (r.restamped) {
      std::printf("    every case identical; rewritten only to replace its provenance (%s) with this clean commit\n",
                  r.stored_provenance.c_str());
    }
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
  if (r.stored_dirty) {
    std::printf("    note: its commit had uncommitted changes in fixtures/, reference/ or golden/; "
                "`moeval golden --update` from a clean tree restamps it\n");
  }
  print_differences(r.differences, max_lines);
  return r.differences.empty() ? kPass : kCheckFailed;
}

// --update would rewrite a file of a newer schema in this build's older one, losing what the newer
// moeval stored: refused before anything is rewritten, as the check refuses to read it. (A file
// that cannot be read at all is replaced; the update says so.)
void refuse_newer_schema(const std::filesystem::path& dir, const std::vector<golden::Family>& families) {
  for (const golden::Family f : families) {
    const std::filesystem::path file = golden::family_path(dir, f);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) continue;
    std::int64_t version = 0;
    try {
      version = golden::schema_version_of(golden::H5File::open_read(file).root()).value_or(0);
    } catch (const std::exception&) {
      continue;
    }
    if (version > golden::kSchemaVersion) {
      throw UsageError("golden file '" + file.string() + "': schema_version is " + std::to_string(version) +
                       ", newer than this build's " + std::to_string(golden::kSchemaVersion) +
                       "; --update would rewrite it in the older schema: use the moeval that wrote it (nothing was rewritten)");
    }
  }
}

int run_golden(const GoldenOptions& o) {
  golden::CorpusSelection selection;
  selection.case_name = o.case_name;
  for (const std::string& f : o.families) selection.families.push_back(golden::parse_family(f));
  const auto family_name = [](golden::Family f) { return std::string(golden::to_string(f)); };
  if (const std::string m = first_repeated(selection.families, family_name); !m.empty()) {
    throw UsageError("--family " + m + " is listed twice; list each family once");
  }
  golden::require_known_case(selection);
  const std::filesystem::path dir = existing_golden_dir(o.dir, "--dir");
  const std::vector<golden::Family> families = golden::families_touched(selection);
  if (o.update) refuse_newer_schema(dir, families);

  // One family at a time, its line printed when it is done: an update stopped by Ctrl-C has said
  // which files it rewrote. The first Ctrl-C lets the family in flight finish (its file is
  // replaced whole or not at all), then the process ends by SIGINT; a second one ends it at once.
  std::unique_ptr<StopOnSignal> stop;
  if (o.update) stop = std::make_unique<StopOnSignal>("\nmoeval: stopping after the file in flight (again to stop now)\n");
  std::printf("moeval golden --%s: %s\n", o.update ? "update" : "check", dir.c_str());
  std::vector<std::string> rewritten;
  int status = 0;
  double seconds = 0;
  std::size_t done = 0;
  for (const golden::Family f : families) {
    // Checked before each family but the first: once the header is printed the first family is in
    // flight, so a Ctrl-C after it always finds a file being rewritten (and names it).
    if (done > 0 && stop && stop->requested().load()) break;
    golden::CorpusSelection one = selection;
    one.families = {f};
    for (const golden::FamilyReport& r : o.update ? golden::update_corpus(dir, one) : golden::check_corpus(dir, one)) {
      status = worse(status, report(r, o.update, o.max_lines));
      seconds += r.seconds;
      if (r.rewritten) rewritten.push_back(r.path.filename().string());
    }
    ++done;
  }
  if (stop && stop->requested().load()) {
    std::string list;
    for (const std::string& name : rewritten) list += (list.empty() ? "" : ", ") + name;
    std::printf("golden --update: interrupted after %zu of %s; rewritten: %s\n", done,
                count_of(long(families.size()), "file").c_str(), list.empty() ? "none" : list.c_str());
    std::fflush(stdout);
    stop->end_by_signal();
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
  cmd->add_option("--case", options->case_name, "Only this case (its group name in the family file)")
      ->check(not_empty("a case name"));
  cmd->add_option("--dir", options->dir,
                  "Directory of the *.h5 files (default: $MOEVAL_GOLDEN_DIR, else the source tree's golden/data)")
      ->check(not_empty("a directory"));
  cmd->add_option("--family", options->families, "Only these families (wna16, marlin, layouts, layer)");
  cmd->add_option("--max-lines", options->max_lines, "Differences printed per family (default 40)")
      ->check(integer_in(0, 1000000));
  return [options] { return run_golden(*options); };
}

}  // namespace moeval::cli
