// The failure pattern names what a bug class leaves behind: one wrong column in the rows of one
// expert, a tile-periodic error, whole wrong rows. Outputs here are the reference's own rounding
// with chosen elements changed.
#include <gtest/gtest.h>

#include "failure_pattern.h"

namespace moeval::cli {
namespace {

// rows × cols reference with y = 1 + small, S = 1, K = 128; output = its bf16 rounding.
reference::ReferenceOutput reference_of(std::int64_t rows, std::int64_t cols) {
  reference::ReferenceOutput r(rows, cols, DType::bf16, 128);
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    r.y[std::size_t(i)] = 1.0 + double(i % 7) / 64.0;
    r.s[std::size_t(i)] = 1.0;
  }
  r.round_outputs();
  return r;
}

class FailurePatternTest : public ::testing::TestWithParam<Tier> {};

TEST_P(FailurePatternTest, CorrectOutputHasNoMismatch) {
  const auto ref = reference_of(32, 128);
  const FailurePattern p = failure_pattern(ref.y16, ref, GetParam(), {}, 0);
  EXPECT_EQ(p.mismatches, 0);
  EXPECT_EQ(p.summary, "0 of 4096 elements (0%)");
}

TEST_P(FailurePatternTest, OneColumnOfOneExpertsRows) {
  const auto ref = reference_of(32, 128);
  std::vector<std::int32_t> row_expert(32);
  for (std::size_t r = 0; r < 32; ++r) row_expert[r] = std::int32_t(r % 4);  // expert 2: rows 2, 6, 10, ...
  auto out = ref.y16;
  for (std::int64_t r = 2; r < 32; r += 4) out[ref.index(r, 69)] = round_to_bits(3.0, DType::bf16);
  const FailurePattern p = failure_pattern(out, ref, GetParam(), row_expert, 4);
  EXPECT_EQ(p.mismatches, 8);
  EXPECT_EQ(p.json["cols"]["count"], 1);
  EXPECT_EQ(p.json["cols"]["first"][0], 69);
  EXPECT_EQ(p.json["experts"]["count"], 1);
  EXPECT_EQ(p.json["experts"]["counts"][2], 8);
  EXPECT_EQ(p.json["col_in_tile64"][5], 8);
  EXPECT_NE(p.summary.find("1 of 128 columns (69)"), std::string::npos) << p.summary;
  EXPECT_NE(p.summary.find("1 of 4 experts (2)"), std::string::npos) << p.summary;
  EXPECT_NE(p.summary.find("column within a 64-wide tile: 5 only"), std::string::npos) << p.summary;
}

// A wrong scale permutation moves whole 8-column groups: the pattern counts them.
TEST_P(FailurePatternTest, ColumnsClusterByTheirEightAndSixtyFourColumnGroups) {
  const auto ref = reference_of(32, 256);
  auto out = ref.y16;
  for (std::int64_t r = 0; r < 32; ++r) {
    for (std::int64_t c = 136; c < 144; ++c) out[ref.index(r, c)] = round_to_bits(-2.0, DType::bf16);  // group 17
  }
  const FailurePattern p = failure_pattern(out, ref, GetParam(), {}, 0);
  EXPECT_EQ(p.json["col_tiles8"]["count"], 1);
  EXPECT_EQ(p.json["col_tiles8"]["of"], 32);
  EXPECT_EQ(p.json["col_tiles8"]["first"][0], 17);
  EXPECT_EQ(p.json["col_tiles64"]["count"], 1);
  EXPECT_EQ(p.json["col_tiles64"]["first"][0], 2);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(p.json["col_in_tile8"][i], 32) << i;
  EXPECT_NE(p.summary.find("columns in 1 of 32 8-column groups (17), 1 of 4 64-column tiles (2)"), std::string::npos)
      << p.summary;
}

TEST_P(FailurePatternTest, WholeRowsAndTheMap) {
  const auto ref = reference_of(96, 64);
  auto out = ref.y16;
  for (std::int64_t c = 0; c < 64; ++c) out[ref.index(17, c)] = 0x7fc0;  // NaN row
  const FailurePattern p = failure_pattern(out, ref, GetParam(), {}, 0);
  EXPECT_EQ(p.mismatches, 64);
  EXPECT_EQ(p.json["rows"]["count"], 1);
  EXPECT_NE(p.summary.find("column within a 64-wide tile: all 64"), std::string::npos) << p.summary;
  const auto& map = p.json["map"];
  EXPECT_EQ(map["row_step"], 2);  // 96 rows in 48 cells
  EXPECT_DOUBLE_EQ(map["fraction"][8][0].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(map["fraction"][9][0].get<double>(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Tiers, FailurePatternTest, ::testing::Values(Tier::exact, Tier::bounded),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

}  // namespace
}  // namespace moeval::cli
