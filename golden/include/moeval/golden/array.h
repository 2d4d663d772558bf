// A typed, row-major n-dimensional array: what one golden dataset holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "moeval/fixtures/half.h"

namespace moeval::golden {

// The element types the schema allows (16-bit floats travel as u16 bits tagged with a DType).
enum class ElementType : std::uint8_t { u8, u16, i32, f32, f64 };

std::string_view to_string(ElementType type);

using Shape = std::vector<std::int64_t>;
using ArrayData = std::variant<std::vector<std::uint8_t>, std::vector<std::uint16_t>, std::vector<std::int32_t>,
                               std::vector<float>, std::vector<double>>;

struct Array {
  Shape shape;
  ArrayData data;
  // Set for u16 arrays that hold fp16/bf16 bits; written as the dataset's `dtype` attribute.
  std::optional<DType> float16;

  ElementType type() const { return ElementType(data.index()); }
  std::size_t size() const;
};

// Number of elements a shape describes (1 for rank 0).
std::int64_t element_count(const Shape& shape);

// Builds an array, checking that the element count matches the shape (throws std::invalid_argument).
template <class T>
Array make_array(Shape shape, std::vector<T> values, std::optional<DType> float16 = std::nullopt);

}  // namespace moeval::golden
