#include "moeval/golden/h5.h"

#include <H5Cpp.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include "moeval/golden/errors.h"

namespace moeval::golden {
namespace {

// HDF5 prints its error stack to stderr by default; we report through GoldenError instead.
void silence_hdf5() {
  static const bool silenced = [] {
    H5::Exception::dontPrint();
    return true;
  }();
  (void)silenced;
}

// The most specific line of HDF5's error stack ("truncated file: eof = ...", "bad symbol table"),
// which says far more than the C++ wrapper's "H5Fopen failed".
herr_t keep_innermost(unsigned, const H5E_error2_t* err, void* out) {
  if (err->desc && *err->desc) *static_cast<std::string*>(out) = err->desc;
  return 0;
}

std::string describe(const H5::Exception& e) {
  std::string innermost;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &innermost);
  H5Eclear2(H5E_DEFAULT);
  std::string detail = e.getDetailMsg();
  if (!innermost.empty() && innermost != detail) detail += " (" + innermost + ")";
  return "HDF5 error: " + detail;
}

// Runs an HDF5 call, turning its exception into a GoldenError naming file and object.
template <class F>
auto guarded(const std::filesystem::path& file, std::string_view object, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const H5::Exception& e) {
    throw golden_error(file, object, describe(e));
  }
}

struct TypePair {
  H5::PredType file;
  H5::PredType memory;
};

TypePair h5_type(ElementType type) {
  switch (type) {
    case ElementType::u8: return {H5::PredType::STD_U8LE, H5::PredType::NATIVE_UINT8};
    case ElementType::u16: return {H5::PredType::STD_U16LE, H5::PredType::NATIVE_UINT16};
    case ElementType::i32: return {H5::PredType::STD_I32LE, H5::PredType::NATIVE_INT32};
    case ElementType::f32: return {H5::PredType::IEEE_F32LE, H5::PredType::NATIVE_FLOAT};
    case ElementType::f64: return {H5::PredType::IEEE_F64LE, H5::PredType::NATIVE_DOUBLE};
  }
  return {H5::PredType::STD_U8LE, H5::PredType::NATIVE_UINT8};
}

// Maps a stored datatype back to the schema's element types; anything else is not ours.
bool element_type_of(const H5::DataType& type, ElementType& out) {
  const H5T_class_t cls = type.getClass();
  const std::size_t size = type.getSize();
  if (cls == H5T_INTEGER) {
    const bool is_signed = H5::IntType(type.getId()).getSign() != H5T_SGN_NONE;
    if (size == 1 && !is_signed) return out = ElementType::u8, true;
    if (size == 2 && !is_signed) return out = ElementType::u16, true;
    if (size == 4 && is_signed) return out = ElementType::i32, true;
  } else if (cls == H5T_FLOAT) {
    if (size == 4) return out = ElementType::f32, true;
    if (size == 8) return out = ElementType::f64, true;
  }
  return false;
}

template <class T>
ArrayData allocate(std::size_t n) {
  return ArrayData(std::vector<T>(n));
}

ArrayData allocate(ElementType type, std::size_t n) {
  switch (type) {
    case ElementType::u8: return allocate<std::uint8_t>(n);
    case ElementType::u16: return allocate<std::uint16_t>(n);
    case ElementType::i32: return allocate<std::int32_t>(n);
    case ElementType::f32: return allocate<float>(n);
    case ElementType::f64: return allocate<double>(n);
  }
  return {};
}

H5::DataSpace dataspace(const Shape& shape) {
  if (shape.empty()) return H5::DataSpace(H5S_SCALAR);
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  return H5::DataSpace(int(dims.size()), dims.data());
}

}  // namespace

struct H5Group::Node {
  std::shared_ptr<const std::filesystem::path> file;
  H5::Group group;
  std::string path;
};

struct H5File::State {
  std::filesystem::path path;
  H5::H5File file;
  bool open = true;
  bool in_memory = false;  // created for writing: close() writes the image to `path`
};

H5Group::H5Group(std::shared_ptr<const Node> node) : node_(std::move(node)) {}

const std::filesystem::path& H5Group::file() const { return *node_->file; }
const std::string& H5Group::object_path() const { return node_->path; }

std::string H5Group::where(std::string_view child) const {
  std::string p = node_->path == "/" ? "" : node_->path;
  if (!child.empty()) p += "/" + std::string(child);
  return p.empty() ? "/" : p;
}

bool H5Group::has_child(std::string_view name) const {
  return guarded(file(), where(name), [&] { return node_->group.nameExists(std::string(name)); });
}

H5Group H5Group::group(std::string_view name) const {
  const std::string path = where(name);
  if (!has_child(name)) throw golden_error(file(), path, "group is missing");
  require_hard_link(name);
  return guarded(file(), path, [&] {
    if (node_->group.childObjType(std::string(name)) != H5O_TYPE_GROUP) {
      throw golden_error(file(), path, "is not a group");
    }
    return H5Group(std::make_shared<const Node>(Node{node_->file, node_->group.openGroup(std::string(name)), path}));
  });
}

H5Group H5Group::create_group(std::string_view name) const {
  const std::string path = where(name);
  if (has_child(name)) throw golden_error(file(), path, "already exists; every name is written once");
  return guarded(file(), path, [&] {
    return H5Group(std::make_shared<const Node>(Node{node_->file, node_->group.createGroup(std::string(name)), path}));
  });
}

namespace {

// "" for a hard link (the only kind our writer makes); otherwise what the link is, for the error.
// A soft or external link may point at nothing (h5py's visititems passes over such a link, and
// HDF5 answered "component not found" for its parent group) or at another case's data.
std::string non_hard_link(hid_t group, const char* name, const H5L_info_t& info) {
  switch (info.type) {
    case H5L_TYPE_HARD: return {};
    case H5L_TYPE_SOFT: {
      std::string target(info.u.val_size, '\0');
      if (info.u.val_size > 0 && H5Lget_val(group, name, target.data(), target.size(), H5P_DEFAULT) >= 0) {
        target.resize(std::strlen(target.c_str()));
        return "is a soft link to '" + target + "'";
      }
      return "is a soft link";
    }
    case H5L_TYPE_EXTERNAL: return "is an external link (to another file)";
    default: return "is a user-defined link";
  }
}

constexpr const char* kOnlyHardLinks = "; golden files hold only hard links (regenerate with `moeval golden --update`)";

struct Links {
  std::vector<std::string> names;
  std::string first_non_hard_name;  // "" when every link is hard
  std::string first_non_hard_what;
};

herr_t collect_link(hid_t group, const char* name, const H5L_info_t* info, void* out) {
  Links& links = *static_cast<Links*>(out);
  links.names.emplace_back(name);
  if (links.first_non_hard_name.empty()) {
    if (std::string what = non_hard_link(group, name, *info); !what.empty()) {
      links.first_non_hard_name = name;
      links.first_non_hard_what = std::move(what);
    }
  }
  return 0;
}

// The names of a group's children of one type, sorted. The links are listed in one pass in the
// order they are stored (H5Literate, native order) and sorted here. Not by index
// (getObjnameByIdx): that asks HDF5 to build and sort the group's whole link table again for every
// name, and on a group in dense storage whose link heap is damaged, HDF5 1.10's error path frees
// table entries it never initialised — `moeval golden --check` died of SIGSEGV on one of 40
// bit-flipped copies of wna16.h5 (GoldenFileErrors.DamagedLinkHeapIsAnErrorNotACrash damages
// such a heap bit by bit).
// A link that is not hard is refused, naming it (thrown as a GoldenError by the caller, who knows
// the file and the group's path).
std::vector<std::string> children_of_type(const H5::Group& group, H5O_type_t type, Links& links) {
  hsize_t position = 0;
  if (H5Literate(group.getId(), H5_INDEX_NAME, H5_ITER_NATIVE, &position, collect_link, &links) < 0) {
    throw H5::GroupIException("H5Literate", "could not list the group's links");
  }
  if (!links.first_non_hard_name.empty()) return {};
  std::vector<std::string> names;
  for (std::string& name : links.names) {
    if (group.childObjType(name) == type) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> H5Group::children(int h5o_type) const {
  Links links;
  std::vector<std::string> names =
      guarded(file(), where(""), [&] { return children_of_type(node_->group, H5O_type_t(h5o_type), links); });
  if (!links.first_non_hard_name.empty()) {
    throw golden_error(file(), where(links.first_non_hard_name), links.first_non_hard_what + kOnlyHardLinks);
  }
  for (const std::string& name : names) require_one_link(name);
  return names;
}

// A second hard link makes one object the data of two names (a case's codes that are another
// case's): our writer gives every object exactly one.
void H5Group::require_one_link(std::string_view name) const {
  const std::string path = where(name);
  const unsigned links = guarded(file(), path, [&] {
    H5O_info_t info{};
    node_->group.getObjinfo(std::string(name), info, H5O_INFO_BASIC);
    return info.rc;
  });
  if (links != 1) {
    throw golden_error(file(), path,
                       "is one object under " + std::to_string(links) +
                           " names (hard links) in this file; golden files give each object one name");
  }
}

std::vector<std::string> H5Group::groups() const { return children(H5O_TYPE_GROUP); }

std::vector<std::string> H5Group::datasets() const { return children(H5O_TYPE_DATASET); }

void H5Group::require_hard_link(std::string_view name) const {
  const std::string path = where(name);
  const std::string what = guarded(file(), path, [&] {
    H5L_info_t info{};
    const std::string child(name);
    if (H5Lget_info(node_->group.getId(), child.c_str(), &info, H5P_DEFAULT) < 0) {
      throw H5::GroupIException("H5Lget_info", "could not read the link");
    }
    return non_hard_link(node_->group.getId(), child.c_str(), info);
  });
  if (!what.empty()) throw golden_error(file(), path, what + kOnlyHardLinks);
  require_one_link(name);
}

void H5Group::write_array(std::string_view name, const Array& array) const {
  const std::string path = where(name);
  if (std::int64_t(array.size()) != element_count(array.shape)) {
    throw golden_error(file(), path,
                       "array holds " + std::to_string(array.size()) + " values for a shape of " +
                           std::to_string(element_count(array.shape)) + " elements");
  }
  if (has_child(name)) throw golden_error(file(), path, "already exists; every name is written once");
  guarded(file(), path, [&] {
    const TypePair types = h5_type(array.type());
    const H5::DataSpace space = dataspace(array.shape);
    H5::DSetCreatPropList plist;
    if (array.size() > 0 && !array.shape.empty()) {
      // One chunk per dataset: the corpus is small, and shuffle + deflate (gzip) stays readable by h5py.
      std::vector<hsize_t> chunk(array.shape.begin(), array.shape.end());
      plist.setChunk(int(chunk.size()), chunk.data());
      plist.setShuffle();
      plist.setDeflate(6);
    }
    H5::DataSet ds = node_->group.createDataSet(std::string(name), types.file, space, plist);
    if (array.size() > 0) {
      std::visit([&](const auto& values) { ds.write(values.data(), types.memory); }, array.data);
    }
    if (array.float16) {
      const H5::StrType str(H5::PredType::C_S1, H5T_VARIABLE);
      H5::Attribute attr = ds.createAttribute("dtype", str, H5::DataSpace(H5S_SCALAR));
      attr.write(str, std::string(to_string(*array.float16)));
    }
  });
}

Array H5Group::read_array(std::string_view name) const {
  const std::string path = where(name);
  if (!has_child(name)) throw golden_error(file(), path, "dataset is missing");
  require_hard_link(name);
  return guarded(file(), path, [&] {
    if (node_->group.childObjType(std::string(name)) != H5O_TYPE_DATASET) {
      throw golden_error(file(), path, "is not a dataset");
    }
    H5::DataSet ds = node_->group.openDataSet(std::string(name));
    ElementType type{};
    if (!element_type_of(ds.getDataType(), type)) {
      throw golden_error(file(), path,
                         "has an element type outside the schema; allowed: uint8, uint16, int32, "
                         "float32, float64");
    }
    const H5::DataSpace space = ds.getSpace();
    const int rank = space.getSimpleExtentNdims();
    std::vector<hsize_t> dims(std::size_t(std::max(rank, 0)));
    if (rank > 0) space.getSimpleExtentDims(dims.data());
    // A corrupt dataspace can claim any size: refuse more than the file could hold once inflated
    // (deflate expands at most ~1032:1) before allocating, instead of dying of bad_alloc or OOM.
    double claimed = double(h5_type(type).memory.getSize());
    for (hsize_t d : dims) claimed *= double(d);
    std::error_code ec;
    const double file_bytes = double(std::filesystem::file_size(file(), ec));
    if (claimed > std::max(64.0 * (1 << 20), 1100.0 * file_bytes)) {
      char text[96];
      std::snprintf(text, sizeof text, "claims %.4g bytes of data, more than a file of %.0f bytes can hold", claimed,
                    file_bytes);
      throw golden_error(file(), path, std::string(text) + " (corrupt dataspace)");
    }
    Array array;
    array.shape.assign(dims.begin(), dims.end());
    array.data = allocate(type, std::size_t(element_count(array.shape)));
    if (array.size() > 0) {
      std::visit([&](auto& values) { ds.read(values.data(), h5_type(type).memory); }, array.data);
    }
    if (ds.attrExists("dtype")) {
      H5::Attribute attr = ds.openAttribute("dtype");
      std::string tag;
      attr.read(attr.getStrType(), tag);
      if (type != ElementType::u16) throw golden_error(file(), path, "carries a 16-bit float dtype but is not uint16");
      try {
        array.float16 = parse_dtype(tag);
      } catch (const std::exception&) {
        throw golden_error(file(), path, "dtype attribute '" + tag + "' is not fp16 or bf16");
      }
    }
    return array;
  });
}

void H5Group::set_attribute(std::string_view name, const AttrValue& value) const {
  const std::string path = where(name) + " (attribute)";
  guarded(file(), path, [&] {
    if (node_->group.attrExists(std::string(name))) node_->group.removeAttr(std::string(name));
    const H5::DataSpace scalar(H5S_SCALAR);
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      node_->group.createAttribute(std::string(name), H5::PredType::STD_I64LE, scalar)
          .write(H5::PredType::NATIVE_INT64, i);
    } else if (const auto* d = std::get_if<double>(&value)) {
      node_->group.createAttribute(std::string(name), H5::PredType::IEEE_F64LE, scalar)
          .write(H5::PredType::NATIVE_DOUBLE, d);
    } else {
      const H5::StrType str(H5::PredType::C_S1, H5T_VARIABLE);
      node_->group.createAttribute(std::string(name), str, scalar).write(str, std::get<std::string>(value));
    }
  });
}

bool H5Group::has_attribute(std::string_view name) const {
  return guarded(file(), where(name), [&] { return node_->group.attrExists(std::string(name)); });
}

AttrValue H5Group::attribute(std::string_view name) const {
  const std::string path = where(name) + " (attribute)";
  if (!has_attribute(name)) throw golden_error(file(), path, "attribute is missing");
  return guarded(file(), path, [&]() -> AttrValue {
    H5::Attribute attr = node_->group.openAttribute(std::string(name));
    if (attr.getSpace().getSimpleExtentNpoints() != 1) throw golden_error(file(), path, "is not a scalar");
    switch (attr.getTypeClass()) {
      case H5T_INTEGER: {
        std::int64_t v = 0;
        attr.read(H5::PredType::NATIVE_INT64, &v);
        return v;
      }
      case H5T_FLOAT: {
        double v = 0;
        attr.read(H5::PredType::NATIVE_DOUBLE, &v);
        return v;
      }
      case H5T_STRING: {
        std::string v;
        attr.read(attr.getStrType(), v);
        return v;
      }
      default: throw golden_error(file(), path, "has a type outside the schema; allowed: integer, real, string");
    }
  });
}

std::vector<std::string> H5Group::attribute_names() const {
  return guarded(file(), where(""), [&] {
    std::vector<std::string> names;
    const int count = node_->group.getNumAttrs();
    for (int i = 0; i < count; ++i) names.push_back(node_->group.openAttribute(unsigned(i)).getName());
    std::sort(names.begin(), names.end());
    return names;
  });
}

namespace {

template <class T>
T typed_attribute(const H5Group& g, std::string_view name, const char* expected) {
  const AttrValue value = g.attribute(name);
  if (const auto* v = std::get_if<T>(&value)) return *v;
  std::string p = g.object_path() == "/" ? "" : g.object_path();
  throw golden_error(g.file(), p + "/" + std::string(name) + " (attribute)", std::string("must be ") + expected);
}

}  // namespace

std::int64_t H5Group::int_attribute(std::string_view name) const {
  return typed_attribute<std::int64_t>(*this, name, "an integer");
}
double H5Group::real_attribute(std::string_view name) const { return typed_attribute<double>(*this, name, "a real"); }
std::string H5Group::string_attribute(std::string_view name) const {
  return typed_attribute<std::string>(*this, name, "a string");
}

H5File::H5File(std::shared_ptr<State> state) : state_(std::move(state)) {}

H5File H5File::create(const std::filesystem::path& path) {
  silence_hdf5();
  return guarded(path, "", [&] {
    // STRONG close: close() really closes the file, so a following fsync + rename sees every byte.
    H5::FileAccPropList fapl;
    fapl.setFcloseDegree(H5F_CLOSE_STRONG);
    // Built in memory (core driver, no backing store); close() writes the finished image with
    // write(2). HDF5 never writes to the disk itself, so a full disk or an I/O error is one errno
    // of ours, not a failed flush that HDF5's C++ destructors report line by line and that the
    // library's exit handler trips over again.
    fapl.setCore(1 << 20, false);
    // The 1.10 file format: single-chunk datasets need no B-tree and small groups store links
    // compactly, which halves the size of a corpus of many small datasets. h5py reads it.
    fapl.setLibverBounds(H5F_LIBVER_V110, H5F_LIBVER_V110);
    return H5File(std::make_shared<State>(
        State{path, H5::H5File(path.string(), H5F_ACC_TRUNC, H5::FileCreatPropList::DEFAULT, fapl), true, true}));
  });
}

namespace {

std::uint64_t little_endian(const unsigned char* p, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = bytes; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// What the pre-scan of the global heap found ("" each when nothing).
struct HeapFindings {
  std::string unsafe;    // HDF5 would hang or crash on it: refused before HDF5 opens the file
  std::string past_end;  // a collection that runs past the end of the file (see open_read)
};

// HDF5 1.10.8 loops forever while loading a global heap collection (where variable-length strings
// such as our provenance attributes live) that holds a free-space object of size 0: its parser
// advances by the object's size. Found by fuzzing (docs/fuzzing.md). Walk every collection the
// way the library does and refuse the file before HDF5 sees it.
HeapFindings corrupt_global_heap(const std::vector<unsigned char>& file) {
  HeapFindings found;
  if (file.size() < 16) return found;
  const unsigned version = file[8];
  const unsigned length_size = version >= 2 ? file[10] : (file.size() > 14 ? file[14] : 8);
  if (length_size != 2 && length_size != 4 && length_size != 8) return found;
  const std::size_t object_header = 8 + length_size;      // index, refcount, reserved, size
  const std::size_t collection_header = 8 + length_size;  // "GCOL", version, reserved, size
  static const unsigned char signature[5] = {'G', 'C', 'O', 'L', 1};
  // memchr finds the candidates: a memcmp at every byte was most of a fuzz execution's time.
  for (std::size_t at = 0; at + collection_header <= file.size(); ++at) {
    const void* g = std::memchr(file.data() + at, 'G', file.size() - collection_header + 1 - at);
    if (g == nullptr) break;
    at = std::size_t(static_cast<const unsigned char*>(g) - file.data());
    if (std::memcmp(file.data() + at, signature, 5) != 0) continue;
    const std::uint64_t size = little_endian(file.data() + at + 8, length_size);
    // HDF5 never writes a collection under 4096 bytes; 1.10.8 sizes its object table from this
    // field, and a string stored "in" a smaller one made it copy from past the table (a crash
    // found by fuzzing, fuzz/regressions/global_heap_collection_too_small.h5).
    if (size < 4096) {
      found.unsafe = "global heap collection at byte " + std::to_string(at) + " claims " + std::to_string(size) +
                     " bytes (a collection has at least 4096: corrupt)";
      return found;
    }
    // HDF5 does not hang on it: it allocates "size" bytes to load the collection and fails. But a
    // size near 2^64 is a request the allocator refuses (glibc: NULL; AddressSanitizer: abort,
    // fuzz/regressions/hdf5_realloc_size_max.h5), and HDF5's failure says only "H5Aread failed".
    if (size > file.size() - at) {
      if (found.past_end.empty()) {
        found.past_end = "global heap collection at byte " + std::to_string(at) + " claims " + std::to_string(size) +
                         " bytes, more than the " + std::to_string(file.size() - at) +
                         " bytes from there to the end of the file (corrupt)";
      }
      continue;
    }
    const std::size_t end = at + std::size_t(size);
    for (std::size_t p = at + collection_header; p < end && p + object_header <= end;) {
      const unsigned index = unsigned(little_endian(file.data() + p, 2));
      const std::uint64_t object = little_endian(file.data() + p + 8, length_size);
      // Compared before any arithmetic: a size near 2^64 wrapped the padded size below to a small
      // number, and HDF5 then copied "size" bytes (fuzz/regressions/hdf5_global_heap_object_size_max.h5).
      if (object > end - p) {
        found.unsafe = "global heap collection at byte " + std::to_string(at) + " holds an object of " +
                       std::to_string(object) + " bytes at byte " + std::to_string(p) +
                       " that overruns the collection (corrupt)";
        return found;
      }
      const std::uint64_t need = index > 0 ? object_header + ((object + 7) / 8) * 8 : object;
      if (need == 0 || need > end - p) {
        found.unsafe = "global heap collection at byte " + std::to_string(at) + " holds an object of " +
                       std::to_string(object) + " bytes at byte " + std::to_string(p) +
                       (need == 0 ? " (size 0: corrupt)" : " that overruns the collection (corrupt)");
        return found;
      }
      p += std::size_t(need);
    }
  }
  return found;
}

}  // namespace

H5File H5File::open_read(const std::filesystem::path& path) {
  silence_hdf5();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw golden_error(path, "", "does not exist");
  if (!std::filesystem::is_regular_file(path, ec)) throw golden_error(path, "", "is not a regular file");
  const bool is_hdf5 = guarded(path, "", [&] { return H5::H5File::isHdf5(path.string()); });
  if (!is_hdf5) throw golden_error(path, "", "is not an HDF5 file (no HDF5 signature; corrupt or another format)");
  HeapFindings heap;
  {
    // One read of the whole file (every open pays for it; byte-wise stream iteration cost more than
    // HDF5's own parse). A size that cannot be known reads as empty; HDF5's open then says why.
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    std::vector<unsigned char> bytes(ec ? 0 : std::size_t(size));
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
    bytes.resize(std::size_t(in.gcount()));
    heap = corrupt_global_heap(bytes);
    if (!heap.unsafe.empty()) throw golden_error(path, "", "cannot be read safely: " + heap.unsafe);
  }
  // A first open through the C API: the C++ wrapper drops HDF5's error stack, whose innermost line
  // ("truncated file: eof = ...") is the useful part of the message.
  const hid_t probe = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (probe < 0) {
    std::string innermost;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &innermost);
    H5Eclear2(H5E_DEFAULT);
    throw golden_error(path, "",
                       "cannot be opened (corrupt or truncated): HDF5 error: " +
                           (innermost.empty() ? std::string("H5Fopen failed") : innermost));
  }
  // Checked only once HDF5 has opened the file: a truncated file (whose last collection is cut) is
  // refused by the open above with its own message; an opened file holds everything up to its
  // end-of-allocation, so a collection running past its end is corrupt.
  if (!heap.past_end.empty()) {
    H5Fclose(probe);
    throw golden_error(path, "", "cannot be read safely: " + heap.past_end);
  }
  // The C++ object takes its own reference to the probe's file (one open: each open allocates
  // HDF5's metadata cache). Default (weak) close degree: two readers of one file share HDF5's open
  // file, and closing one must not invalidate the other's objects.
  H5File file = guarded(path, "", [&] { return H5File(std::make_shared<State>(State{path, H5::H5File(probe)})); });
  H5Fclose(probe);
  return file;
}

H5Group H5File::root() const {
  if (!state_->open) throw golden_error(state_->path, "", "used after close()");
  return guarded(state_->path, "/", [&] {
    auto file = std::make_shared<const std::filesystem::path>(state_->path);
    return H5Group(std::make_shared<const H5Group::Node>(H5Group::Node{file, state_->file.openGroup("/"), "/"}));
  });
}

// HDF5's own metadata checksum (Jenkins lookup3); not in the public headers, exported by libhdf5.
extern "C" std::uint32_t H5_checksum_metadata(const void* data, std::size_t len, std::uint32_t initval);

namespace {

// HDF5 1.10.8's H5Fget_file_image clears the "open for writing" flags of a version 2/3
// superblock in the image but keeps the checksum computed with them set, so the image cannot be
// opened ("incorrect metadata checksum"). Recompute it over the image's own bytes (a no-op for a
// correct image). Superblock v2/v3: signature 8, version, offset size, length size, flags, then 4
// addresses, then the checksum.
void repair_superblock_checksum(std::vector<char>& image) {
  static const char signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  if (image.size() < 12 || std::memcmp(image.data(), signature, 8) != 0) return;
  const unsigned version = static_cast<unsigned char>(image[8]);
  const std::size_t body = 12 + 4 * std::size_t(static_cast<unsigned char>(image[9]));
  if (version < 2 || image.size() < body + 4) return;
  const std::uint32_t checksum = H5_checksum_metadata(image.data(), body, 0);
  std::memcpy(image.data() + body, &checksum, 4);  // little-endian on every platform we build for
}

// The bytes of an in-memory file, written with our own error handling (errno in the message).
void write_image(const std::filesystem::path& path, const std::vector<char>& image) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw golden_error(path, "", std::string("cannot create: ") + std::strerror(errno));
  std::size_t done = 0;
  while (done < image.size()) {
    const ssize_t n = ::write(fd, image.data() + done, image.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw golden_error(path, "",
                         "cannot write " + std::to_string(image.size()) + " bytes: " + std::strerror(err));
    }
    done += std::size_t(n);
  }
  if (::close(fd) != 0) throw golden_error(path, "", std::string("cannot write (close): ") + std::strerror(errno));
}

}  // namespace

void H5File::close() {
  if (!state_->open) return;
  state_->open = false;
  std::vector<char> image;
  const bool in_memory = state_->in_memory;
  guarded(state_->path, "", [&] {
    state_->file.flush(H5F_SCOPE_GLOBAL);
    if (in_memory) {
      const hid_t id = state_->file.getId();
      const ssize_t size = H5Fget_file_image(id, nullptr, 0);
      if (size < 0 || (image.resize(std::size_t(size)), H5Fget_file_image(id, image.data(), image.size())) != size) {
        H5Eclear2(H5E_DEFAULT);
        throw golden_error(state_->path, "", "HDF5 error: cannot take the image of the file built in memory");
      }
    }
    state_->file.close();
  });
  if (in_memory) {
    repair_superblock_checksum(image);
    write_image(state_->path, image);
  }
}

}  // namespace moeval::golden
