// The diff names every kind of difference (case, dataset, index, stored vs regenerated), applies
// the fp64 relative rule only where the regenerating code asks for it, and stays silent on equality.
#include "moeval/golden/diff.h"

#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "moeval/golden/golden_file.h"
#include "test_support.h"

namespace moeval::golden {
namespace {

using testing::sample_record;
using testing::ScratchDir;

std::vector<double>& y_of(CaseRecord& r) {
  return std::get<std::vector<double>>(r.datasets.at("expected/y").array.data);
}

TEST(GoldenDiff, IdenticalRecordsHaveNoDifference) {
  EXPECT_TRUE(diff_case(sample_record("c"), sample_record("c")).empty());
}

TEST(GoldenDiff, OneChangedCodeIsNamedWithItsIndex) {
  CaseRecord regenerated = sample_record("c");
  std::get<std::vector<std::uint8_t>>(regenerated.datasets.at("weights/codes").array.data)[4] = 9;  // [1, 1]
  const auto diffs = diff_case(sample_record("c"), regenerated);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].case_name, "c");
  EXPECT_EQ(diffs[0].dataset, "weights/codes");
  EXPECT_EQ(diffs[0].index, (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(diffs[0].stored, "14");
  EXPECT_EQ(diffs[0].regenerated, "9");
  EXPECT_EQ(format(diffs[0]), "case c: dataset weights/codes [1, 1]: stored 14, regenerated 9 (1 element differ)");
}

TEST(GoldenDiff, SixteenBitValuesShowBitsAndValue) {
  CaseRecord regenerated = sample_record("c");
  std::get<std::vector<std::uint16_t>>(regenerated.datasets.at("inputs/a").array.data)[1] = 0xbf81;
  const auto diffs = diff_case(sample_record("c"), regenerated);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].stored, "0xbf80 (-1)");
  EXPECT_EQ(diffs[0].regenerated, "0xbf81 (-1.0078125)");
}

TEST(GoldenDiff, Fp64RuleToleratesSummationOrderNotRealChanges) {
  CaseRecord regenerated = sample_record("c");
  // ‖y‖∞ = 3, so the tolerance is 3e-12: a last-bits change passes, 1e-11 does not.
  y_of(regenerated)[0] = 1.0 + 1e-13;
  EXPECT_TRUE(diff_case(sample_record("c"), regenerated).empty());
  y_of(regenerated)[0] = 1.0 + 1e-11;
  const auto diffs = diff_case(sample_record("c"), regenerated);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].dataset, "expected/y");
  EXPECT_EQ(diffs[0].index, (std::vector<std::int64_t>{0, 0}));
}

TEST(GoldenDiff, BitwiseRuleAppliesToFp64WhenAsked) {
  CaseRecord regenerated = sample_record("c");
  regenerated.datasets.at("expected/y").compare = Compare::bitwise;
  y_of(regenerated)[0] = std::nextafter(1.0, 2.0);
  EXPECT_EQ(diff_case(sample_record("c"), regenerated).size(), 1u);
}

TEST(GoldenDiff, NanMatchesOnlyNanInTheSamePlace) {
  CaseRecord stored = sample_record("c");
  CaseRecord regenerated = sample_record("c");
  y_of(stored)[1] = std::numeric_limits<double>::quiet_NaN();
  y_of(regenerated)[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(diff_case(stored, regenerated).empty());
  y_of(regenerated)[1] = -2.5;
  EXPECT_EQ(diff_case(stored, regenerated).size(), 1u);
}

TEST(GoldenDiff, ShapeTypeDtypeMissingExtraAndAttributesAreReported) {
  CaseRecord regenerated = sample_record("c");
  regenerated.datasets.at("routing/topk_ids").array = make_array<std::int32_t>({1, 3}, {0, -1, 7});
  regenerated.datasets.at("routing/topk_weights").array = make_array<double>({3}, {0.5, 0.25, 0.125});
  regenerated.datasets.at("inputs/a").array.float16 = DType::f16;
  regenerated.datasets.erase("weights/zeros");
  regenerated.datasets["layouts/new"] = {make_array<std::int32_t>({1}, {0})};
  regenerated.attributes["experts"] = std::int64_t(9);
  std::map<std::string, std::string> what;
  for (const Difference& d : diff_case(sample_record("c"), regenerated)) what[d.dataset] = d.what;
  EXPECT_EQ(what, (std::map<std::string, std::string>{{"routing/topk_ids", "shape"},
                                                      {"routing/topk_weights", "type"},
                                                      {"inputs/a", "dtype"},
                                                      {"weights/zeros", "extra"},
                                                      {"layouts/new", "missing"},
                                                      {"@experts", "attribute"}}));
}

TEST(GoldenDiff, CasesOnlyOnOneSideAreNamed) {
  const auto diffs = diff_cases({sample_record("a"), sample_record("b")}, {sample_record("b"), sample_record("c")});
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(format(diffs[0]), "case c: regenerated but missing from the file");
  EXPECT_EQ(format(diffs[1]), "case a: stored in the file but no longer generated");
}

TEST(GoldenDiff, ValueFlippedInTheFileWithTheHdf5ApiIsFoundAndNamed) {
  ScratchDir dir("flip");
  write_golden_file(dir / "f.h5", current_provenance(), "unit", {sample_record("c")});
  {
    H5::H5File f(std::string(dir / "f.h5"), H5F_ACC_RDWR);
    H5::DataSet ds = f.openGroup("c").openGroup("expected").openDataSet("y");
    double y[4];
    ds.read(y, H5::PredType::NATIVE_DOUBLE);
    y[3] = -y[3];
    ds.write(y, H5::PredType::NATIVE_DOUBLE);
  }
  const auto diffs = diff_cases(GoldenReader(dir / "f.h5").read_all(), {sample_record("c")});
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(format(diffs[0]), "case c: dataset expected/y [1, 1]: stored -3, regenerated 3 (1 element differ)");
}

}  // namespace
}  // namespace moeval::golden
