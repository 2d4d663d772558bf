// marlin_wgmma_k_loop_rate's argument checks (before any device access: no device needed).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "moeval/kernels/marlin_wgmma_rate.h"

namespace moeval::kernels {
namespace {

std::string error_of(const MarlinWgmmaRateArgs& args) {
  try {
    marlin_wgmma_k_loop_rate(args);
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not an argument error) ") + e.what();
  }
  return "(no error)";
}

TEST(MarlinWgmmaRateErrors, RowsOtherThanTheItemHeights) {
  MarlinWgmmaRateArgs args;
  for (int rows : {8, 48, 256}) {
    args.rows = rows;
    EXPECT_EQ(error_of(args), "marlin_wgmma_k_loop_rate: rows = " + std::to_string(rows) + "; allowed 16, 32, 64 or 128");
  }
}

TEST(MarlinWgmmaRateErrors, KTilesOutOfRangeOrNotAMultipleOf16) {
  MarlinWgmmaRateArgs args;
  for (int k_tiles : {0, 8, 24, (1 << 20) + 16}) {
    args.k_tiles = k_tiles;
    EXPECT_EQ(error_of(args), "marlin_wgmma_k_loop_rate: k_tiles = " + std::to_string(k_tiles) +
                                  "; allowed 16 to 2^20, a multiple of 16");
  }
}

TEST(MarlinWgmmaRateErrors, RepeatsOutOfRange) {
  MarlinWgmmaRateArgs args;
  args.repeats = 0;
  EXPECT_EQ(error_of(args), "marlin_wgmma_k_loop_rate: repeats = 0; allowed 1 to 1000");
  args.repeats = 1001;
  EXPECT_EQ(error_of(args), "marlin_wgmma_k_loop_rate: repeats = 1001; allowed 1 to 1000");
}

TEST(MarlinWgmmaRateErrors, NegativeDevice) {
  MarlinWgmmaRateArgs args;
  args.device = -1;
  EXPECT_EQ(error_of(args), "marlin_wgmma_k_loop_rate: device = -1; must be ≥ 0");
}

}  // namespace
}  // namespace moeval::kernels
