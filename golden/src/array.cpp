#include "moeval/golden/array.h"

#include <stdexcept>
#include <string>
#include <type_traits>

namespace moeval::golden {

std::string_view to_string(ElementType type) {
  switch (type) {
    case ElementType::u8: return "uint8";
    case ElementType::u16: return "uint16";
    case ElementType::i32: return "int32";
    case ElementType::f32: return "float32";
    case ElementType::f64: return "float64";
  }
  return "?";
}

std::size_t Array::size() const {
  return std::visit([](const auto& v) { return v.size(); }, data);
}

std::int64_t element_count(const Shape& shape) {
  std::int64_t count = 1;
  for (std::int64_t d : shape) count *= d;
  return count;
}

template <class T>
Array make_array(Shape shape, std::vector<T> values, std::optional<DType> float16) {
  for (std::int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("array shape has a negative extent " + std::to_string(d));
  }
  if (element_count(shape) != std::int64_t(values.size())) {
    throw std::invalid_argument("array shape holds " + std::to_string(element_count(shape)) + " elements but " +
                                std::to_string(values.size()) + " values were given");
  }
  if (float16 && !std::is_same_v<T, std::uint16_t>) {
    throw std::invalid_argument("a 16-bit float dtype tag needs uint16 bits");
  }
  return Array{std::move(shape), ArrayData(std::move(values)), float16};
}

template Array make_array(Shape, std::vector<std::uint8_t>, std::optional<DType>);
template Array make_array(Shape, std::vector<std::uint16_t>, std::optional<DType>);
template Array make_array(Shape, std::vector<std::int32_t>, std::optional<DType>);
template Array make_array(Shape, std::vector<float>, std::optional<DType>);
template Array make_array(Shape, std::vector<double>, std::optional<DType>);

}  // namespace moeval::golden
