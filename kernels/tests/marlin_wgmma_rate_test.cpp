// marlin_wgmma_k_loop_rate on a device: it runs for every dtype, weight width and item height where
// the wgmma path can run, and says why where it cannot. (Its value is a measurement for
// `moeval bench`, never asserted against a speed: speed lives in the bench, not in tests.)
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <stdexcept>
#include <string>

#include "moeval/kernels/marlin_wgmma_rate.h"
#include "moeval/testbed/devices.h"

namespace moeval::kernels {
namespace {

struct RateCase {
  ActDType dtype;
  MarlinWeightType type;
  int rows;
};

std::string case_label(const RateCase& c) {
  return std::string(to_string(c.dtype)) + "_" + to_string(c.type) + "_rows" + std::to_string(c.rows);
}
// gtest and ctest print the parameter with this (otherwise its bytes).
void PrintTo(const RateCase& c, std::ostream* os) { *os << case_label(c); }

class MarlinWgmmaRate : public ::testing::TestWithParam<RateCase> {};

TEST_P(MarlinWgmmaRate, RunsAndReportsAFiniteRate) {
  MOEVAL_REQUIRE_GPUS(1);
  MarlinWgmmaRateArgs args;
  args.dtype = GetParam().dtype;
  args.type = GetParam().type;
  args.rows = GetParam().rows;
  args.k_tiles = 256;
  args.repeats = 1;
  if (const std::string why = marlin_wgmma_k_loop_unavailable(0); !why.empty()) {
    try {
      marlin_wgmma_k_loop_rate(args);
      ADD_FAILURE() << "ran although unavailable: " << why;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "marlin_wgmma_k_loop_rate: " + why);  // the same reason, as an error
    }
    GTEST_SKIP() << why;
  }
  const double rate = marlin_wgmma_k_loop_rate(args);
  EXPECT_TRUE(std::isfinite(rate) && rate > 0) << rate;
}

TEST(MarlinWgmmaRateDevice, DeviceBeyondTheVisibleOnesIsAnArgumentError) {
  MOEVAL_REQUIRE_GPUS(1);
  MarlinWgmmaRateArgs args;
  args.device = 1000;
  try {
    marlin_wgmma_k_loop_rate(args);
    FAIL() << "no error for device 1000";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("device = 1000 but"), std::string::npos) << e.what();
  }
}

std::string case_name(const ::testing::TestParamInfo<RateCase>& info) { return case_label(info.param); }

INSTANTIATE_TEST_SUITE_P(KLoop, MarlinWgmmaRate,
                         ::testing::Values(RateCase{ActDType::bf16, MarlinWeightType::uint4b8, 64},
                                           RateCase{ActDType::bf16, MarlinWeightType::uint4b8, 128},
                                           RateCase{ActDType::f16, MarlinWeightType::uint4b8, 64},
                                           RateCase{ActDType::bf16, MarlinWeightType::uint8b128, 64},
                                           RateCase{ActDType::f16, MarlinWeightType::uint8b128, 128}),
                         case_name);

}  // namespace
}  // namespace moeval::kernels
