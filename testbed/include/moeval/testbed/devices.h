// Which CUDA devices this process can use, and the gtest helpers that skip without them.
#pragma once

#include <string>

namespace moeval::testbed {

struct DeviceCount {
  int count = 0;       // usable devices (0 when CUDA reports none or no driver)
  std::string reason;  // why count is 0, in words, for skip messages and reports
};

// Queries once per process; never throws.
const DeviceCount& visible_devices();

}  // namespace moeval::testbed

// Skip (never pass) the current gtest when fewer than `n` devices are visible.
#define MOEVAL_REQUIRE_GPUS(n)                                                                   \
  do {                                                                                           \
    const auto& moeval_devices_ = ::moeval::testbed::visible_devices();                          \
    if (moeval_devices_.count < (n)) {                                                           \
      GTEST_SKIP() << "needs " << (n) << " CUDA device(s), found " << moeval_devices_.count      \
                   << (moeval_devices_.reason.empty() ? "" : ": " + moeval_devices_.reason);     \
    }                                                                                            \
  } while (0)
