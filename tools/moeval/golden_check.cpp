#include "golden_check.h"

#include <exception>

#include "exit_codes.h"
#include "moeval/golden/check.h"
#include "moeval/golden/errors.h"
#include "moeval/golden/golden_file.h"
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

std::filesystem::path existing_golden_dir(const std::string& dir, const std::string& option) {
  const std::filesystem::path d = corpus_dir(dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(d, ec)) {
    throw UsageError("golden directory '" + d.string() + "' " +
                     (std::filesystem::exists(d, ec) ? "is not a directory" : "does not exist") +
                     (dir.empty() ? " ($MOEVAL_GOLDEN_DIR or the compiled-in default; pass " + option + ")" : ""));
  }
  return d;
}

void require_golden_corpus(const std::string& dir, const std::vector<golden::Family>& families) {
  const std::filesystem::path d = existing_golden_dir(dir, "--golden-dir");
  for (const golden::Family family : families) {
    const std::filesystem::path file = golden::family_path(d, family);
    const golden::GoldenReader reader(file);  // missing, not HDF5, truncated, another schema: GoldenError
    const std::string expected(golden::to_string(family));
    if (reader.family() != expected) {
      throw golden::golden_error(file, "", "is the " + reader.family() + " file (its root attribute family = '" +
                                               reader.family() + "'), not the " + expected + " file");
    }
    (void)reader.read_all();  // a dataset that cannot be read is a corrupt file, not a difference
  }
}

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
