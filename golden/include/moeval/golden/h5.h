// A thin RAII layer over the HDF5 C++ API: files, groups, attributes and typed datasets.
//
// Every HDF5 failure becomes one GoldenError naming the file and the object (HDF5's own stderr dump
// is silenced), so callers never see an H5::Exception or a half-printed error stack.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "moeval/golden/array.h"

namespace moeval::golden {

// Scalar attribute values: integers, reals and strings (h5py reads them as int, float, str).
using AttrValue = std::variant<std::int64_t, double, std::string>;

// One group of an open file (the root included). Cheap to copy; keeps the file open.
class H5Group {
 public:
  const std::filesystem::path& file() const;
  // Path of the group inside the file, e.g. "/case-name/layouts".
  const std::string& object_path() const;

  bool has_child(std::string_view name) const;
  H5Group group(std::string_view name) const;         // existing group; throws when absent
  H5Group create_group(std::string_view name) const;  // new group; throws when it exists
  // Names of child groups / datasets, sorted by name. These, group() and read_array() refuse a
  // soft, external or user-defined link, and an object with a second hard link (our writer makes
  // one hard link to each object).
  std::vector<std::string> groups() const;
  std::vector<std::string> datasets() const;

  // Writes a dataset (deflate + shuffle when non-empty). A float16 tag becomes its `dtype` attribute.
  void write_array(std::string_view name, const Array& array) const;
  Array read_array(std::string_view name) const;

  void set_attribute(std::string_view name, const AttrValue& value) const;
  bool has_attribute(std::string_view name) const;
  AttrValue attribute(std::string_view name) const;
  std::vector<std::string> attribute_names() const;

  // Typed attribute access; throws GoldenError naming the attribute when it is absent or mistyped.
  std::int64_t int_attribute(std::string_view name) const;
  double real_attribute(std::string_view name) const;
  std::string string_attribute(std::string_view name) const;

 private:
  friend class H5File;
  struct Node;  // the HDF5 handle lives in the .cpp so users need no HDF5 headers
  explicit H5Group(std::shared_ptr<const Node> node);
  std::string where(std::string_view child) const;
  std::vector<std::string> children(int h5o_type) const;  // an H5O_type_t; HDF5 stays out of this header
  void require_hard_link(std::string_view name) const;
  void require_one_link(std::string_view name) const;

  std::shared_ptr<const Node> node_;
};

// An open HDF5 file. create() builds a new file in memory, and close() writes it to the path with
// write(2) (errors such as "No space left on device" become one GoldenError naming the file);
// open_read() checks the file exists and is HDF5.
class H5File {
 public:
  static H5File create(const std::filesystem::path& path);
  static H5File open_read(const std::filesystem::path& path);

  H5Group root() const;
  // Flushes and closes; further use throws. The destructor closes silently.
  void close();

 private:
  struct State;
  explicit H5File(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace moeval::golden
