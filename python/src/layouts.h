// One packed layout of a case's weights as named arrays: what the Python package hands out (numpy
// views) and uploads for a Python kernel (device tensors). The arrays are moved out of fixtures'
// packers, never copied.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "moeval/fixtures/cases.h"

namespace moeval::python {

namespace nb = nanobind;
using Size = std::size_t;

// One packed layout of a case's weights: named arrays (moved out of the packer's result, never
// copied) with their shapes, plus scalar attributes.
struct Layout {
  using Data = std::variant<std::vector<std::uint8_t>, std::vector<std::uint16_t>, std::vector<std::uint32_t>,
                            std::vector<std::int32_t>>;
  struct Array {
    std::string name;
    Data data;
    std::vector<Size> shape;
  };
  std::string name;
  std::vector<Array> arrays;
  nb::dict attrs;

  // `leading` are the known leading dimensions; the last one is derived from the size. An array
  // whose size does not fit them stays flat.
  template <class T>
  void add(std::string array_name, std::vector<T>&& v, std::vector<Size> leading) {
    if (v.empty()) return;  // absent (zero points of symmetric types, g_idx without act-order)
    Size known = 1;
    for (Size d : leading) known *= d;
    std::vector<Size> shape{v.size()};
    if (known == v.size() && leading.size() >= 2) {
      shape = leading;
    } else if (known > 0 && v.size() % known == 0) {
      shape = leading;
      shape.push_back(v.size() / known);
    }
    arrays.push_back({std::move(array_name), Data(std::move(v)), std::move(shape)});
  }
};

// name: wna16, marlin, gptq, awq or compressed_tensors (std::invalid_argument otherwise; the
// packers' InvalidProblem for a scheme the layout cannot hold).
Layout pack_layout(const GemmCase& c, const std::string& name);

}  // namespace moeval::python
