#include "device_selection.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>

#include "build_info.h"
#include "device_arch.h"
#include "exit_codes.h"
#include "validators.h"
#include "moeval/testbed/devices.h"

namespace moeval::cli {

std::string describe_no_device(const std::string& cuda_reason) {
  // The CUDA runtime reports a missing libcuda as cudaErrorInsufficientDriver; look for it ourselves.
  void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) {
    return "no NVIDIA driver is installed on this machine (libcuda.so.1 cannot be loaded), so no GPU can be used";
  }
  ::dlclose(driver);
  if (cuda_reason.find("cudaErrorInsufficientDriver") != std::string::npos) {
    return "the installed NVIDIA driver is older than the CUDA runtime this binary was built with (" +
           version_text() + "): " + cuda_reason;
  }
  if (cuda_reason.find("cudaErrorNoDevice") != std::string::npos || cuda_reason == "no CUDA device") {
    return "the NVIDIA driver is installed but sees no GPU (check CUDA_VISIBLE_DEVICES and nvidia-smi): " +
           cuda_reason;
  }
  return cuda_reason;
}

void check_device_list(const std::vector<int>& requested) {
  for (const int d : requested) {
    if (d < 0) throw UsageError("--device " + std::to_string(d) + ": a device index is 0 or more");
  }
  if (const std::string m = first_repeated(requested, [](int d) { return std::to_string(d); }); !m.empty()) {
    throw UsageError("--device " + m + " is listed twice; list each device once");
  }
}

DevicePlan plan_devices(const std::vector<int>& requested) {
  check_device_list(requested);
  DevicePlan plan;
  const auto& visible = testbed::visible_devices();
  if (visible.count == 0) {
    plan.no_device = describe_no_device(visible.reason);
    return plan;
  }
  std::vector<int> devices = requested;
  if (devices.empty()) {
    for (int d = 0; d < visible.count; ++d) devices.push_back(d);
  }
  for (int d : devices) {
    if (d >= visible.count) {
      throw UsageError("--device " + std::to_string(d) + " does not exist; visible devices: 0.." +
                       std::to_string(visible.count - 1));
    }
  }
  for (int d : devices) {
    cudaDeviceProp prop{};
    if (const cudaError_t status = cudaGetDeviceProperties(&prop, d); status != cudaSuccess) {
      cudaGetLastError();
      plan.unusable.push_back("device " + std::to_string(d) + ": cannot read its properties: " +
                              cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
      continue;
    }
    if (const std::string why = arch_mismatch(prop.major, prop.minor, cuda_architectures()); !why.empty()) {
      plan.unusable.push_back("device " + std::to_string(d) + " (" + prop.name + "): " + why);
      continue;
    }
    plan.devices.push_back(d);
  }
  return plan;
}

}  // namespace moeval::cli
