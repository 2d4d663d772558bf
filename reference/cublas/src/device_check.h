// Private: every buffer of a call must live on one device (the cuda:1 bug class).
#pragma once

#include <initializer_list>

namespace moeval::reference::detail {

struct NamedBuffer {
  const void* ptr;
  const char* name;
};

// The device of the first required buffer. Throws std::invalid_argument naming `where` and the
// buffer when a required one is null, host memory or unknown to CUDA, or when any non-null buffer
// (required or optional) lives on another device.
int common_device(std::initializer_list<NamedBuffer> required, std::initializer_list<NamedBuffer> optional,
                  const char* where);

}  // namespace moeval::reference::detail
