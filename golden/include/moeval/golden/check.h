// The corpus check and update behind `moeval golden` (and the CPU tier of `moeval check`):
// regenerate with the CPU reference, diff against the family files, rewrite atomically on update.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "moeval/golden/corpus.h"
#include "moeval/golden/diff.h"
#include "moeval/golden/schema.h"

namespace moeval::golden {

struct CorpusSelection {
  std::vector<Family> families;  // empty: all
  std::string case_name;         // empty: every case
};

struct FamilyReport {
  Family family{};
  std::filesystem::path path;
  std::size_t cases = 0;                // cases regenerated (and compared / written)
  std::vector<Difference> differences;  // stored vs regenerated (for an update: what changed)
  std::optional<std::string> error;     // the file could not be read (or, on update, written)
  std::string stored_provenance;        // "written by <generator> at commit <hash>[-dirty] on <date>"
  bool stored_dirty = false;            // the stored commit marks uncommitted changes
  bool rewritten = false;               // update only
  // update only: the cases were identical, but the stored commit was -dirty and this tree's is
  // clean as git says now, so the file was rewritten to record a commit that reproduces it.
  bool restamped = false;
  int stale_temps_removed = 0;          // update only
  // update only: the file was there but could not be read (why); it is replaced whole, and
  // `differences` is empty since nothing could be compared (not "every case missing").
  std::optional<std::string> replaced_unreadable;
  double seconds = 0;
};

// Throws std::invalid_argument when selection.case_name names no case of the selected families.
void require_known_case(const CorpusSelection& selection);

// The families a selection touches: the named ones (every family when none is named), less, when a
// case is named, those whose corpus does not hold it.
std::vector<Family> families_touched(const CorpusSelection& selection);

// --check: per family, the differences between the file and the regenerated cases (only the
// selected case when one is named; families without it are left out of the result).
std::vector<FamilyReport> check_corpus(const std::filesystem::path& dir, const CorpusSelection& selection);

// --update: rewrites each family file whose content would change (all of it, or only the selected
// case, keeping the other stored cases); an unreadable file is replaced unless a single case was
// selected. A whole-file update also rewrites an unchanged file whose stored commit is -dirty when
// `now`'s commit is clean and verified by git at run time (restamped). The differences say what changed. Files are written with
// `now` as their provenance.
std::vector<FamilyReport> update_corpus(const std::filesystem::path& dir, const CorpusSelection& selection,
                                        const Provenance& now);
std::vector<FamilyReport> update_corpus(const std::filesystem::path& dir, const CorpusSelection& selection);

}  // namespace moeval::golden
