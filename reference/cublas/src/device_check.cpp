#include "device_check.h"

#include <stdexcept>
#include <string>

#include "moeval/kernels/device_info.h"

namespace moeval::reference::detail {

int common_device(std::initializer_list<NamedBuffer> required, std::initializer_list<NamedBuffer> optional,
                  const char* where) {
  int device = -1;
  const char* first = "";
  auto check = [&](const NamedBuffer& b) {
    const int d = kernels::device_of(b.ptr, (std::string(where) + ": " + b.name).c_str());
    if (device < 0) {
      device = d;
      first = b.name;
    } else if (d != device) {
      throw std::invalid_argument(std::string(where) + ": " + b.name + " lives on device " + std::to_string(d) + " but " +
                                  first + " on device " + std::to_string(device) + "; all buffers must share one device");
    }
  };
  for (const NamedBuffer& b : required) check(b);
  for (const NamedBuffer& b : optional) {
    if (b.ptr != nullptr) check(b);
  }
  return device;
}

}  // namespace moeval::reference::detail
