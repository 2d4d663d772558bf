#include "moeval/golden/check.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>

#include "moeval/golden/atomic_write.h"
#include "moeval/golden/errors.h"
#include "moeval/golden/generate.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/loader.h"

namespace moeval::golden {
namespace {

std::vector<Family> selected(const CorpusSelection& s) { return s.families.empty() ? all_families() : s.families; }

std::vector<CaseRecord> regenerate(Family family, const CorpusSelection& s) {
  if (s.case_name.empty()) return generate_family(family);
  return generate_family(family, [&](const std::string& name) { return name == s.case_name; });
}

// The commit is shortened to 12 digits, keeping a "-dirty" mark (a short hash alone would hide it).
std::string describe(const Provenance& p) {
  const bool dirty = has_uncommitted_changes(p);
  const std::string hash = dirty ? p.git_commit.substr(0, p.git_commit.size() - kDirtySuffix.size()) : p.git_commit;
  const std::string commit = hash.substr(0, 12) + std::string(dirty ? kDirtySuffix : "");
  return "written by " + p.generator_version + " at commit " + commit + " on " + p.date;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::set<std::string> corpus_names(Family family) {
  std::set<std::string> names;
  for (const MoeProblem& p : corpus(family)) names.insert(p.name());
  return names;
}

// A file that belongs to another family (its root says so, or its cases are another family's
// corpus) would otherwise show up as every case missing and every stored case extra: name it.
std::optional<std::string> foreign_family(Family family, const GoldenReader& reader) {
  const std::string expected(to_string(family));
  if (reader.family() != expected) {
    return "is the " + reader.family() + " file (its root attribute family = '" + reader.family() +
           "'), not the " + expected + " file; was it copied or renamed onto " + file_name(family) + "?";
  }
  const std::vector<std::string>& stored = reader.case_names();
  if (stored.empty()) return std::nullopt;
  const std::set<std::string> own = corpus_names(family);
  for (const std::string& name : stored) {
    if (own.count(name)) return std::nullopt;  // at least one case of its own: an ordinary diff
  }
  for (Family other : all_families()) {
    if (other == family) continue;
    const std::set<std::string> theirs = corpus_names(other);
    std::size_t matching = 0;
    for (const std::string& name : stored) matching += theirs.count(name);
    if (matching * 2 > stored.size()) {
      return "holds the cases of the " + std::string(to_string(other)) + " family (" + std::to_string(matching) +
             " of its " + std::to_string(stored.size()) + " case names are " + file_name(other) +
             " cases, none is a " + expected + " case) although its root says family '" + expected +
             "': this is the " + std::string(to_string(other)) + " file under the name " + file_name(family);
    }
  }
  return std::nullopt;
}

FamilyReport check_family(Family family, const std::filesystem::path& path, const std::vector<CaseRecord>& regenerated,
                          const CorpusSelection& s) {
  FamilyReport report{family, path, regenerated.size()};
  std::vector<CaseRecord> stored;
  try {
    const GoldenReader reader(path);
    report.stored_provenance = describe(reader.provenance());
    report.stored_dirty = has_uncommitted_changes(reader.provenance());
    if (auto foreign = foreign_family(family, reader)) {
      report.error = golden_error(path, "", *foreign).what();
      return report;
    }
    if (s.case_name.empty()) {
      stored = reader.read_all();
    } else if (reader.has_case(s.case_name)) {
      stored.push_back(reader.read_case(s.case_name));
    }
  } catch (const GoldenError& e) {
    report.error = e.what();
    return report;
  }
  report.differences = diff_cases(stored, regenerated);
  return report;
}

FamilyReport update_family(Family family, const std::filesystem::path& path, std::vector<CaseRecord> regenerated,
                           const CorpusSelection& s, const Provenance& now) {
  FamilyReport report{family, path, regenerated.size()};
  report.stale_temps_removed = remove_stale_temps(path);
  std::vector<CaseRecord> stored;
  bool readable = false;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    try {
      const GoldenReader reader(path);
      report.stored_provenance = describe(reader.provenance());
      report.stored_dirty = has_uncommitted_changes(reader.provenance());
      stored = reader.read_all();
      readable = true;
    } catch (const GoldenError& e) {
      if (!s.case_name.empty()) {
        report.error =
            std::string(e.what()) + " (one case of an unreadable file cannot be updated; update the whole file)";
        return report;
      }
      report.replaced_unreadable = e.what();
    }
  }
  std::vector<CaseRecord> next = std::move(regenerated);
  if (!s.case_name.empty()) {
    std::vector<CaseRecord> merged = stored;
    bool replaced = false;
    for (CaseRecord& r : merged) {
      if (r.name == s.case_name) r = next.front(), replaced = true;
    }
    if (!replaced) merged.push_back(next.front());
    next = std::move(merged);
  }
  if (!report.replaced_unreadable) report.differences = diff_cases(stored, next);
  if (readable && report.differences.empty()) {
    // Restamping needs every case regenerated here: one selected case says nothing of the others.
    // Only a commit git gave now: the one CMake saw at configure time may be stale.
    const bool now_clean = now.commit_verified && !has_uncommitted_changes(now);
    const bool restamp = s.case_name.empty() && report.stored_dirty && now_clean;
    if (!restamp) return report;
    report.restamped = true;
  }
  try {
    write_golden_file(path, now, std::string(to_string(family)), next);
    report.rewritten = true;
  } catch (const GoldenError& e) {
    report.error = e.what();
  }
  return report;
}

}  // namespace

std::vector<Family> families_touched(const CorpusSelection& selection) {
  const auto named = [&](const MoeProblem& p) { return p.name() == selection.case_name; };
  std::vector<Family> out;
  for (Family f : selected(selection)) {
    if (selection.case_name.empty() || std::ranges::any_of(corpus(f), named)) out.push_back(f);
  }
  return out;
}

void require_known_case(const CorpusSelection& selection) {
  if (selection.case_name.empty() || !families_touched(selection).empty()) return;
  throw std::invalid_argument("golden case '" + selection.case_name +
                              "' is not in the corpus of the selected families");
}

std::vector<FamilyReport> check_corpus(const std::filesystem::path& dir, const CorpusSelection& selection) {
  require_known_case(selection);
  std::vector<FamilyReport> reports;
  for (Family family : selected(selection)) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<CaseRecord> regenerated = regenerate(family, selection);
    if (!selection.case_name.empty() && regenerated.empty()) continue;
    reports.push_back(check_family(family, family_path(dir, family), regenerated, selection));
    reports.back().seconds = seconds_since(start);
  }
  return reports;
}

std::vector<FamilyReport> update_corpus(const std::filesystem::path& dir, const CorpusSelection& selection) {
  return update_corpus(dir, selection, current_provenance());
}

std::vector<FamilyReport> update_corpus(const std::filesystem::path& dir, const CorpusSelection& selection,
                                        const Provenance& now) {
  require_known_case(selection);
  std::vector<FamilyReport> reports;
  for (Family family : selected(selection)) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<CaseRecord> regenerated = regenerate(family, selection);
    if (!selection.case_name.empty() && regenerated.empty()) continue;
    reports.push_back(update_family(family, family_path(dir, family), std::move(regenerated), selection, now));
    reports.back().seconds = seconds_since(start);
  }
  return reports;
}

}  // namespace moeval::golden
