// Which devices a subcommand runs on, decided before any work starts.
#pragma once

#include <string>
#include <vector>

namespace moeval::cli {

struct DevicePlan {
  std::vector<int> devices;            // validated and able to run this build
  std::vector<std::string> unusable;   // "device 1 (NVIDIA A100-SXM4-80GB): compute capability 8.0 cannot ..."
  std::string no_device;               // why no CUDA device is visible at all ("" when some are)
};

// The devices named by --device (every visible device when none is named), each checked to exist
// (UsageError naming the index and the visible range otherwise) and its compute capability checked
// against the architectures this binary was built for (listed as unusable when it cannot run
// them). Without any visible device, `no_device` says why and nothing else is checked.
DevicePlan plan_devices(const std::vector<int>& requested);

// Why no CUDA device is usable, in words that fit the cause: a machine without the NVIDIA driver
// is told so (CUDA's own "driver version is insufficient" would send people to upgrade a driver
// they do not have).
std::string describe_no_device(const std::string& cuda_reason);

// Rejects negative indices and an index named twice (UsageError naming --device).
void check_device_list(const std::vector<int>& requested);

}  // namespace moeval::cli
