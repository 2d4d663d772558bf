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

}  // namespace moeval::python
