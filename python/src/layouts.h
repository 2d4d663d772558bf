// One packed layout of a case's weights as named arrays: what the Python package hands out (numpy
// views) and uploads for a Python kernel (device tensors). The arrays are moved out of fixtures'
// packers, never copied.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <stdexcept>
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

  // Every array's shape is stated in full, or as its leading dimensions with the last derived from
  // the size (add_rows): never guessed. (A guess that kept `leading` alone where the size matched it
  // dropped a trailing axis of 1: the zero points of a channelwise scheme, [E][N/ppb][G] with G = 1,
  // came out as [E][N/ppb], another rank than with groups.) A size that does not fit is a packer
  // and binding mismatch: std::logic_error, never a flat array.
  template <class T>
  void add(std::string array_name, std::vector<T>&& v, std::vector<Size> shape) {
    if (v.empty()) return;  // absent (zero points of symmetric types, g_idx without act-order)
    Size known = 1;
    for (Size d : shape) known *= d;
    if (known != v.size()) throw mismatch(array_name, v.size(), shape);
    arrays.push_back({std::move(array_name), Data(std::move(v)), std::move(shape)});
  }
  // The last dimension is the size over the leading ones; a size they do not divide (or an empty
  // leading dimension) leaves a shape whose product differs, which add refuses.
  template <class T>
  void add_rows(std::string array_name, std::vector<T>&& v, std::vector<Size> leading) {
    Size known = 1;
    for (Size d : leading) known *= d;
    leading.push_back(known == 0 ? 0 : v.size() / known);
    add(std::move(array_name), std::move(v), std::move(leading));
  }

 private:
  static std::logic_error mismatch(const std::string& array_name, Size size, const std::vector<Size>& shape) {
    std::string dims;
    for (Size d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    return std::logic_error("layout array '" + array_name + "' holds " + std::to_string(size) +
                            " values, which do not fit the shape [" + dims + "] stated for it (a packer and the "
                            "bindings disagree)");
  }
};

// name: wna16, marlin, gptq, awq or compressed_tensors (std::invalid_argument otherwise; the
// packers' InvalidProblem for a scheme the layout cannot hold).
Layout pack_layout(const GemmCase& c, const std::string& name);

}  // namespace moeval::python
