#include "moeval/testbed/devices.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include "moeval/kernels/device_info.h"

namespace moeval::testbed {

namespace {

bool driver_loadable() {
  void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver != nullptr) ::dlclose(driver);
  return driver != nullptr;
}

}  // namespace

const DeviceCount& visible_devices() {
  static const DeviceCount devices = [] {
    DeviceCount d;
    const cudaError_t status = cudaGetDeviceCount(&d.count);
    if (status != cudaSuccess) {
      d.count = 0;
      d.reason = std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
      cudaGetLastError();
      // Without the NVIDIA driver the runtime says "driver version is insufficient", which sends
      // people to upgrade a driver they do not have: name what is missing instead.
      if (!driver_loadable()) d.reason = kNoDriver;
    } else if (d.count == 0) {
      d.reason = "no CUDA device";
    }
    return d;
  }();
  return devices;
}

int foreign_device(int data_device) {
  const int count = visible_devices().count;
  return count >= 2 ? (data_device + 1) % count : data_device;
}

ForeignCurrentDevice::ForeignCurrentDevice(int data_device) : current_(foreign_device(data_device)) {
  kernels::check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
  kernels::check_cuda(cudaSetDevice(current_), "cudaSetDevice (foreign current device)");
}

ForeignCurrentDevice::~ForeignCurrentDevice() { cudaSetDevice(previous_); }

std::string ForeignCurrentDevice::check_restored(const std::string& who) const {
  int now = -1;
  kernels::check_cuda(cudaGetDevice(&now), "cudaGetDevice");
  if (now == current_) return {};
  return who + " left device " + std::to_string(now) + " current (the caller had made device " +
         std::to_string(current_) + " current)";
}

void synchronize_device(int device, const std::string& what) {
  kernels::DeviceGuard guard(device);
  kernels::check_cuda(cudaDeviceSynchronize(), what.c_str());
}

}  // namespace moeval::testbed
