// numpy views of moeval's host arrays, without copies: the memory stays owned by the C++ object
// (a Case, a Reference, a packed layout) and the view keeps that object alive.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace moeval::python {

namespace nb = nanobind;

template <class T>
using HostArray = nb::ndarray<nb::numpy, const T>;

// A read-only view of `v` with `shape` (whose product must be v.size()). `owner` is the Python
// object that owns v; when it is empty the caller's rv_policy::reference_internal ties the view to
// `self` instead.
template <class T>
HostArray<T> view(const std::vector<T>& v, std::vector<std::size_t> shape, nb::handle owner = {}) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  if (n != v.size()) {
    throw std::logic_error("moeval: array of " + std::to_string(v.size()) + " elements viewed with a shape of " +
                           std::to_string(n));
  }
  return HostArray<T>(v.data(), shape.size(), shape.data(), owner);
}

// A new array that owns `values` (moved into a capsule).
template <class T>
nb::ndarray<nb::numpy, T> owned(std::vector<T>&& values, std::vector<std::size_t> shape) {
  auto* held = new std::vector<T>(std::move(values));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(held->data(), shape.size(), shape.data(), owner);
}

// A 16-bit bits argument that failed the typed overload: nanobind's implicit conversion would
// have cast the VALUES to uint16 (1.0 -> 0x0001, a denormal), so those overloads take their array
// with noconvert() and come here. `where` names the function the user called and the argument
// ("judge: output"); `ndim` is the rank required (-1: any) and `dims` says what it should be
// (" [rows, cols] = [32, 256]", or ""). Each fault gets its own message: not uint16 is a TypeError,
// the wrong rank a ValueError with the shape wanted, not on the CPU a TypeError. A uint16 array
// of the right rank (non-contiguous, say) is made contiguous.
template <class Array>
Array bits_argument(nb::handle value, const std::string& where, int ndim, const std::string& dims) {
  const std::string of_shape = dims.empty() ? "" : " of shape" + dims;
  const nb::object dtype = nb::getattr(value, "dtype", nb::none());
  if (dtype.is_none() || !nb::str(dtype).equal(nb::str("uint16"))) {
    const std::string got = dtype.is_none() ? std::string(nb::type_name(value.type()).c_str())
                                             : "an array of dtype " + std::string(nb::str(dtype).c_str());
    throw nb::type_error((where + " must be 16-bit bit patterns (a numpy np.uint16 array" + of_shape + "); got " + got +
                          " (moeval.encode or moeval.to_bits turns values into bits)").c_str());
  }
  const auto shape_of = [](nb::handle array) {
    return std::string(nb::repr(nb::object(nb::getattr(array, "shape", nb::none()))).c_str());
  };
  const nb::object rank = nb::getattr(value, "ndim", nb::none());
  if (ndim >= 0 && nb::isinstance<nb::int_>(rank) && nb::cast<long long>(rank) != ndim) {
    throw std::invalid_argument(where + " must be " + std::to_string(ndim) + "-D" + dims + "; got a " +
                                std::to_string(nb::cast<long long>(rank)) + "-D array of shape " + shape_of(value));
  }
  nb::object contiguous = nb::module_::import_("numpy").attr("ascontiguousarray")(value);
  Array out;
  if (!nb::try_cast(contiguous, out, /*convert=*/false)) {
    throw nb::type_error((where + " must be a CPU np.uint16 array" + of_shape + "; got " +
                          std::string(nb::type_name(value.type()).c_str()) + " of shape " + shape_of(contiguous)).c_str());
  }
  return out;
}

}  // namespace moeval::python
