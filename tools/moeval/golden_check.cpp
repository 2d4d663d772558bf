#include "golden_check.h"

#include <exception>

#include "moeval/golden/check.h"
#include "moeval/golden/loader.h"
#include "plural.h"

namespace moeval::cli {

namespace {

CheckLine family_line(const golden::FamilyReport& r) {
  const std::string what = "cpu golden " + r.path.filename().string() + " (" + count_of(long(r.cases), "case") + ")";
  if (r.error) return {what, "FAIL", *r.error};
  if (!r.differences.empty()) {
    const std::size_t cases = golden::differing_cases(r.differences);
    return {what, "FAIL", count_of(long(cases), "case") + (cases == 1 ? " differs" : " differ") + " (" +
                              count_of(long(r.differences.size()), "difference") +
                              "), first: " + golden::format(r.differences.front()) + " (run `moeval golden --check` for all)"};
  }
  return {what, "PASS", ""};
}

std::filesystem::path corpus_dir(const std::string& dir) {
  return dir.empty() ? golden::default_golden_dir() : std::filesystem::path(dir);
}

}  // namespace

GoldenCheckOutcome check_golden_corpus(const std::string& dir) {
  GoldenCheckOutcome out;
  try {
    for (const golden::FamilyReport& r : golden::check_corpus(corpus_dir(dir), {})) out.lines.push_back(family_line(r));
  } catch (const std::exception& e) {
    out.lines.push_back({"cpu golden corpus", "FAIL", e.what()});
  }
  return out;
}

CheckLine check_golden_family(const std::string& dir, golden::Family family) {
  const std::string what = "cpu golden " + std::string(golden::to_string(family)) + ".h5";
  try {
    golden::CorpusSelection selection;
    selection.families = {family};
    const auto reports = golden::check_corpus(corpus_dir(dir), selection);
    if (reports.size() != 1) return {what, "FAIL", "the corpus check returned " + std::to_string(reports.size()) + " reports"};
    return family_line(reports.front());
  } catch (const std::exception& e) {
    return {what, "FAIL", e.what()};
  }
}

}  // namespace moeval::cli
