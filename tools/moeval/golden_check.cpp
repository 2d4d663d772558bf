#include "golden_check.h"

#include <exception>

#include "moeval/golden/check.h"
#include "moeval/golden/loader.h"
#include "plural.h"

namespace moeval::cli {

GoldenCheckOutcome check_golden_corpus(const std::string& dir) {
  GoldenCheckOutcome out;
  try {
    const std::filesystem::path path = dir.empty() ? golden::default_golden_dir() : std::filesystem::path(dir);
    for (const golden::FamilyReport& r : golden::check_corpus(path, {})) {
      const std::string what = "cpu golden " + r.path.filename().string() + " (" + count_of(long(r.cases), "case") + ")";
      if (r.error) {
        out.lines.push_back({what, "FAIL", *r.error});
      } else if (!r.differences.empty()) {
        const std::size_t cases = golden::differing_cases(r.differences);
        out.lines.push_back({what, "FAIL", count_of(long(cases), "case") + (cases == 1 ? " differs" : " differ") +
                                               " (" + count_of(long(r.differences.size()), "difference") +
                                               "), first: " + golden::format(r.differences.front()) +
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
