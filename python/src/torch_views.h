// torch tensors that view device memory moeval owns (guarded buffers), through DLPack: no copy.
// A view handed to a Python kernel during a call owns nothing (the buffers outlive the call); a
// view a user takes from a GuardedBuffer (GuardedBuffer.tensor) holds the Python buffer object as
// its owner, so the memory stays allocated while the tensor lives.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <vector>

#include "moeval/fixtures/half.h"
#include "moeval/testbed/guarded_buffer.h"

namespace moeval::python {

namespace nb = nanobind;

inline nb::dlpack::dtype float16_dtype(DType d) {
  return {std::uint8_t(d == DType::f16 ? nb::dlpack::dtype_code::Float : nb::dlpack::dtype_code::Bfloat), 16, 1};
}
inline nb::dlpack::dtype float32_dtype() { return nb::dtype<float>(); }
inline nb::dlpack::dtype int32_dtype() { return nb::dtype<std::int32_t>(); }
inline nb::dlpack::dtype uint8_dtype() { return nb::dtype<std::uint8_t>(); }

inline nb::object torch_view(const testbed::GuardedBuffer& b, const std::vector<std::size_t>& shape, nb::dlpack::dtype dtype,
                             nb::handle owner = nb::handle()) {
  nb::ndarray<nb::pytorch> t(b.data(), shape.size(), shape.data(), owner, nullptr, dtype, nb::device::cuda::value,
                             b.device());
  return nb::cast(t, nb::rv_policy::reference);
}

}  // namespace moeval::python
