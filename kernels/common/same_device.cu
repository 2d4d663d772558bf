#include <stdexcept>
#include <string>

#include "moeval/kernels/device_info.h"
#include "moeval/kernels/same_device.h"

namespace moeval::kernels {

int same_device(const char* where, std::initializer_list<NamedBuffer> buffers) {
  int device = -1;
  const char* first = nullptr;
  for (const NamedBuffer& b : buffers) {
    if (b.ptr == nullptr && b.optional) continue;
    int d = 0;
    try {
      d = device_of(b.ptr, b.name);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(where) + ": " + e.what());
    }
    if (device < 0) {
      device = d;
      first = b.name;
    } else if (d != device) {
      throw std::invalid_argument(std::string(where) + ": " + b.name + " lives on cuda:" + std::to_string(d) + " but " +
                                  first + " on cuda:" + std::to_string(device) +
                                  "; all buffers of one call must be on the same device");
    }
  }
  if (device < 0) throw std::invalid_argument(std::string(where) + ": no device buffer given");
  return device;
}

}  // namespace moeval::kernels
