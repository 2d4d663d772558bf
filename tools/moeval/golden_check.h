// The golden part of `moeval check`: the corpus regenerated with the CPU reference and diffed,
// one result line per family file.
#pragma once

#include <string>
#include <vector>

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

}  // namespace moeval::cli
