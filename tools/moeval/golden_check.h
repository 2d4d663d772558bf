// The golden part of `moeval check`: the corpus regenerated with the CPU reference and diffed,
// one result line per family file.
#pragma once

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

// dir empty: golden::default_golden_dir(). Never throws: an unreadable file is a FAIL line.
GoldenCheckOutcome check_golden_corpus(const std::string& dir);

// One family file of the corpus (a job of `moeval check`). Never throws.
CheckLine check_golden_family(const std::string& dir, golden::Family family);

}  // namespace moeval::cli
