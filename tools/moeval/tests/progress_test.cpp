// The progress line: done/total, rate, ETA and failures.
#include <gtest/gtest.h>

#include "progress.h"

namespace moeval::cli {
namespace {

TEST(FormatProgress, BeforeTheFirstCheckTheEtaIsUnknown) {
  EXPECT_EQ(format_progress(0, 340, 0.0, 0), "[0/340] 0.0 checks/s, ETA ?, 0 failed");
}

TEST(FormatProgress, RateAndEtaFromTheElapsedTime) {
  EXPECT_EQ(format_progress(120, 340, 40.0, 2), "[120/340] 3.0 checks/s, ETA 1m13s, 2 failed");
  EXPECT_EQ(format_progress(10, 7210, 5.0, 0), "[10/7210] 2.0 checks/s, ETA 1h00m, 0 failed");
  EXPECT_EQ(format_progress(340, 340, 100.0, 0), "[340/340] 3.4 checks/s, ETA 0s, 0 failed");
}

TEST(WhereRan, OneDeviceEveryDeviceOrTheCpu) {
  EXPECT_EQ(where_ran({{"device", 1}}), "gpu1");
  EXPECT_EQ(where_ran({{"device", nullptr}, {"devices", {0, 1}}}), "gpu0,1") << "a cross-device job";
  EXPECT_EQ(where_ran({{"device", nullptr}}), "cpu");
}

}  // namespace
}  // namespace moeval::cli
