// Every input the fuzzers once failed on (fuzz/regressions/, docs/fuzzing.md) is refused by the
// reader with one GoldenError that says why, before HDF5 parses the part that hung or crashed it.
// One test per saved file, named after it; a file added there joins without a test edit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "moeval/golden/errors.h"
#include "moeval/golden/golden_file.h"

namespace moeval::golden {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> saved_inputs() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(MOEVAL_FUZZ_REGRESSIONS)) {
    if (entry.path().extension() == ".h5") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class FuzzRegression : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzRegression, RefusedWithOneClearError) {
  const fs::path file = fs::path(MOEVAL_FUZZ_REGRESSIONS) / GetParam();
  try {
    const GoldenReader reader(file);
    (void)reader.read_all();
    FAIL() << file << " was read; it must be refused";
  } catch (const GoldenError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be read safely"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Saved, FuzzRegression, ::testing::ValuesIn(saved_inputs()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string name = fs::path(i.param).stem().string();
                           std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
                           return name;
                         });

}  // namespace
}  // namespace moeval::golden
