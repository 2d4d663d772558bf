// The one device all buffers of a kernel call live on (the cuda:1 bug class: launching on the
// current device with pointers owned by another one).
#pragma once

#include <initializer_list>

namespace moeval::kernels {

struct NamedBuffer {
  const void* ptr;
  const char* name;
  bool optional = false;  // a null optional buffer is skipped; a null required one is an error
};

// Device that owns every non-null buffer; throws std::invalid_argument naming `where` and the
// offending buffer when one is null (and required), host memory, or on a different device.
int same_device(const char* where, std::initializer_list<NamedBuffer> buffers);

}  // namespace moeval::kernels
