#include "moeval/testbed/devices.h"

#include <cuda_runtime.h>

namespace moeval::testbed {

const DeviceCount& visible_devices() {
  static const DeviceCount devices = [] {
    DeviceCount d;
    const cudaError_t status = cudaGetDeviceCount(&d.count);
    if (status != cudaSuccess) {
      d.count = 0;
      d.reason = std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
      cudaGetLastError();
    } else if (d.count == 0) {
      d.reason = "no CUDA device";
    }
    return d;
  }();
  return devices;
}

}  // namespace moeval::testbed
