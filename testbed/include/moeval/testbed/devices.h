// Which CUDA devices this process can use, the gtest helpers that skip without them, and the
// "foreign current device" every kernel call of the testbed is made under.
#pragma once

#include <string>

namespace moeval::testbed {

struct DeviceCount {
  int count = 0;       // usable devices (0 when CUDA reports none or no driver)
  std::string reason;  // why count is 0, in words, for skip messages and reports
};

// The reason on a machine without the NVIDIA driver (libcuda.so.1 cannot be loaded).
inline constexpr const char* kNoDriver =
    "no CUDA driver/device: the NVIDIA driver is not installed (libcuda.so.1 cannot be loaded)";

// Queries once per process; never throws.
const DeviceCount& visible_devices();

// The device the testbed makes current before it calls a kernel whose data live on `data_device`:
// (data_device + 1) % count whenever two or more devices exist, so a kernel entry point that does
// not make its own device current (the cuda:1 bug class) launches on the wrong device and fails;
// with one device it is that device.
int foreign_device(int data_device);

// Scope of one kernel call: makes foreign_device(data_device) current, and afterwards tells whether
// the kernel handed the caller's current device back (a kernel may switch devices inside, never
// leave the switch behind). Restores the device that was current before it on destruction.
class ForeignCurrentDevice {
 public:
  explicit ForeignCurrentDevice(int data_device);
  ~ForeignCurrentDevice();
  ForeignCurrentDevice(const ForeignCurrentDevice&) = delete;
  ForeignCurrentDevice& operator=(const ForeignCurrentDevice&) = delete;

  int current() const { return current_; }
  // Empty when the current device is still current(); otherwise "<who> left device X current
  // (the caller had made device Y current)".
  std::string check_restored(const std::string& who) const;

 private:
  int previous_ = 0;
  int current_ = 0;
};

// Waits for all work on `device` and throws std::runtime_error naming `what` if it failed (a
// kernel's asynchronous error surfaces here). Restores the current device.
void synchronize_device(int device, const std::string& what);

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
