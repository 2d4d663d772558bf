// Strict typed access to a CaseRecord read from a file: every missing or mistyped attribute and
// every dataset of the wrong type, shape or dtype is one GoldenError naming file, case and field.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "moeval/golden/errors.h"
#include "moeval/golden/record.h"

namespace moeval::golden {

class RecordFields {
 public:
  RecordFields(const CaseRecord& record, std::filesystem::path file) : record_(record), file_(std::move(file)) {}

  GoldenError error(const std::string& field, const std::string& what) const {
    return golden_error(file_, "case '" + record_.name + "', " + field, what);
  }

  const AttrValue& attribute(const std::string& name) const {
    const auto it = record_.attributes.find(name);
    if (it == record_.attributes.end()) throw error("attribute " + name, "is missing");
    return it->second;
  }
  std::int64_t integer(const std::string& name) const { return typed<std::int64_t>(name, "an integer"); }
  double real(const std::string& name) const { return typed<double>(name, "a real"); }
  std::string text(const std::string& name) const { return typed<std::string>(name, "a string"); }
  bool flag(const std::string& name) const {
    const std::int64_t v = integer(name);
    if (v != 0 && v != 1) throw error("attribute " + name, "is " + std::to_string(v) + "; allowed: 0 or 1");
    return v == 1;
  }

  bool has(const std::string& path) const { return record_.datasets.count(path) != 0; }

  // The values of dataset `path`, which must hold element type T with exactly `shape` and the
  // 16-bit float tag `float16` (none for anything but 16-bit float data).
  template <class T>
  std::vector<T> array(const std::string& path, const Shape& shape, std::optional<DType> float16 = std::nullopt) const {
    const auto it = record_.datasets.find(path);
    if (it == record_.datasets.end()) throw error("dataset " + path, "is missing");
    const Array& a = it->second.array;
    const auto* values = std::get_if<std::vector<T>>(&a.data);
    if (!values) {
      throw error("dataset " + path, "holds " + std::string(to_string(a.type())) + ", expected " +
                                         std::string(to_string(ElementType(ArrayData(std::vector<T>{}).index()))));
    }
    if (a.shape != shape) throw error("dataset " + path, "has shape " + show(a.shape) + ", expected " + show(shape));
    if (a.float16 != float16) {
      throw error("dataset " + path, "has dtype " + tag(a.float16) + ", expected " + tag(float16));
    }
    return *values;
  }

 private:
  template <class T>
  T typed(const std::string& name, const char* expected) const {
    const AttrValue& v = attribute(name);
    if (const auto* t = std::get_if<T>(&v)) return *t;
    throw error("attribute " + name, std::string("must be ") + expected);
  }
  static std::string show(const Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
  }
  static std::string tag(std::optional<DType> d) { return d ? std::string(to_string(*d)) : "none"; }

  const CaseRecord& record_;
  std::filesystem::path file_;
};

}  // namespace moeval::golden
