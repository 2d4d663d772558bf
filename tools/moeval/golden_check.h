// The golden part of `moeval check`: the corpus regenerated with the CPU reference and diffed,
// one result line per family file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "moeval/golden/corpus.h"

namespace moeval::cli {

struct CheckLine {
  std::string what;
  std::string status;  // PASS, FAIL or SKIPPED
  std::string detail;
};

struct GoldenCheckOutcome {
  std::vector<CheckLine> lines;
};

// The golden directory `dir` names (empty: golden::default_golden_dir()), which must be one:
// UsageError "golden directory '<d>' does not exist" (or "is not a directory"), saying for an
// implicit one where it came from and that `option` (--golden-dir, golden's --dir) sets it.
std::filesystem::path existing_golden_dir(const std::string& dir, const std::string& option);

// Before any work of `moeval check`: the golden directory (dir empty: golden::default_golden_dir())
// exists, and the file of each family in `families` reads whole as that family's golden file. A
// missing directory or file, or a corrupt, truncated or foreign one, is an input error (exit 2),
// not a check failure: throws UsageError or GoldenError naming the directory or file. A file that
// reads but differs from the regenerated corpus is left to the check (a FAIL, exit 1).
void require_golden_corpus(const std::string& dir, const std::vector<golden::Family>& families);

// dir empty: golden::default_golden_dir(). Never throws: an unreadable file is a FAIL line.
GoldenCheckOutcome check_golden_corpus(const std::string& dir);

// One family file of the corpus (a job of `moeval check`). Never throws.
CheckLine check_golden_family(const std::string& dir, golden::Family family);

}  // namespace moeval::cli
