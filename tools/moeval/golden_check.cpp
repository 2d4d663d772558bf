#include "golden_check.h"

#include <exception>

#include "moeval/golden/check.h"
#include "moeval/golden/loader.h"

namespace moeval::cli {

GoldenCheckOutcome check_golden_corpus(const std::string& dir) {
  GoldenCheckOutcome out;
  try {
    const std::filesystem::path path = dir.empty() ? golden::default_golden_dir() : std::filesystem::path(dir);
    for (const golden::FamilyReport& r : golden::check_corpus(path, {})) {
      const std::string what = "cpu golden " + r.path.filename().string() + " (" + std::to_string(r.cases) + " cases)";
      if (r.error) {
        out.lines.push_back({what, "FAIL", *r.error});
      } else if (!r.differences.empty()) {
        out.lines.push_back({what, "FAIL", std::to_string(r.differences.size()) + " difference(s), first: " +
                                               golden::format(r.differences.front()) +
                                               " (run `moeval golden --check` for all)"});
      } else {
        out.lines.push_back({what, "PASS", ""});
      }
    }
  } catch (const std::exception& e) {
    out.lines.push_back({"cpu golden corpus", "FAIL", e.what()});
  }
  return out;
}

}  // namespace moeval::cli
