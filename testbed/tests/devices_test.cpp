// Why GPU tests skip, in words that fit the machine: without the NVIDIA driver the skip reason
// names the missing driver, not CUDA's "driver version is insufficient" (which sends people to
// upgrade a driver they do not have).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "moeval/testbed/devices.h"

namespace moeval::testbed {
namespace {

bool driver_loadable() {
  void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver != nullptr) ::dlclose(driver);
  return driver != nullptr;
}

TEST(VisibleDevices, WithoutTheDriverTheReasonSaysNoDriver) {
  if (driver_loadable()) GTEST_SKIP() << "the NVIDIA driver is installed here: nothing to check";
  const DeviceCount& d = visible_devices();
  EXPECT_EQ(d.count, 0);
  EXPECT_EQ(d.reason, kNoDriver);
  EXPECT_EQ(d.reason.find("insufficient"), std::string::npos) << d.reason;
}

TEST(VisibleDevices, NoDevicesAlwaysComeWithAReason) {
  const DeviceCount& d = visible_devices();
  if (d.count > 0) GTEST_SKIP() << d.count << " device(s) visible: nothing to check";
  EXPECT_FALSE(d.reason.empty());
}

}  // namespace
}  // namespace moeval::testbed
