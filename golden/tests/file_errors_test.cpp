// Missing, corrupt, truncated and wrong-schema files each give one GoldenError that names the file
// and says what is wrong (and HDF5 prints nothing of its own).
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "moeval/golden/errors.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/h5.h"
#include "test_support.h"

namespace moeval::golden {
namespace {

using testing::sample_record;
using testing::ScratchDir;

// The message of the GoldenError that opening (and reading every case of) `path` throws.
std::string open_error(const std::filesystem::path& path) {
  try {
    const GoldenReader reader(path);
    reader.read_all();
  } catch (const GoldenError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no GoldenError for " << path;
  return "";
}

void expect_contains_and_record(const std::string& message, const std::string& part) {
  ::testing::Test::RecordProperty("message", message);
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected to contain: " << part;
}

TEST(GoldenFileErrors, MissingFileIsNamed) {
  ScratchDir dir("missing");
  const std::string message = open_error(dir / "absent.h5");
  expect_contains_and_record(message, (dir / "absent.h5").string());
  expect_contains_and_record(message, "does not exist");
}

TEST(GoldenFileErrors, NonHdf5BytesAreCalledCorrupt) {
  ScratchDir dir("corrupt");
  std::ofstream(dir / "garbage.h5") << "this is not an HDF5 file, just text pretending to be one\n";
  const std::string message = open_error(dir / "garbage.h5");
  expect_contains_and_record(message, "garbage.h5");
  expect_contains_and_record(message, "not an HDF5 file");
}

// Our writer makes one hard link to each object. A soft link that points nowhere, one that aliases
// another case's data, an external link, and a second hard link are each refused by name, whether
// met while listing a group or when a dataset or group is opened by its name (the loaders do that).
TEST(GoldenFileErrors, AnythingButOneHardLinkPerObjectIsRefusedByName) {
  struct Variant {
    const char* label;
    std::function<void(hid_t file)> make;
    std::string expected;
  };
  const std::vector<Variant> variants = {
      {"dangling", [](hid_t f) { H5Lcreate_soft("/nowhere", f, "/case-a/weights/extra", H5P_DEFAULT, H5P_DEFAULT); },
       "/case-a/weights/extra: is a soft link to '/nowhere'; golden files hold only hard links"},
      {"alias",
       [](hid_t f) {
         H5Ldelete(f, "/case-b/weights/codes", H5P_DEFAULT);
         H5Lcreate_soft("/case-a/weights/codes", f, "/case-b/weights/codes", H5P_DEFAULT, H5P_DEFAULT);
       },
       "/case-b/weights/codes: is a soft link to '/case-a/weights/codes'; golden files hold only hard links"},
      {"external", [](hid_t f) { H5Lcreate_external("other.h5", "/case-a", f, "/case-c", H5P_DEFAULT, H5P_DEFAULT); },
       "/case-c: is an external link (to another file); golden files hold only hard links"},
      {"hard alias",
       [](hid_t f) {
         H5Ldelete(f, "/case-b/weights/codes", H5P_DEFAULT);
         H5Lcreate_hard(f, "/case-a/weights/codes", f, "/case-b/weights/codes", H5P_DEFAULT, H5P_DEFAULT);
       },
       "/case-a/weights/codes: is one object under 2 names (hard links) in this file; golden files give each object one name"},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.label);
    ScratchDir dir(std::string("links-") + v.label);
    const auto path = dir / "l.h5";
    write_golden_file(path, current_provenance(), "unit", {sample_record("case-a"), sample_record("case-b", 1)});
    {
      const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      ASSERT_GE(f, 0);
      v.make(f);
      H5Fclose(f);
    }
    const std::string message = open_error(path);
    expect_contains_and_record(message, "l.h5");
    expect_contains_and_record(message, v.expected);
  }
  // Opened by name, not listed: read_array and group() check the link themselves.
  ScratchDir dir("links-by-name");
  const auto path = dir / "n.h5";
  write_golden_file(path, current_provenance(), "unit", {sample_record("case-a")});
  {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    H5Lcreate_soft("/case-a/inputs/a", f, "/case-a/weights/codes2", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_soft("/case-a/inputs", f, "/case-a/inputs2", H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
  }
  const H5Group c = H5File::open_read(path).root().group("case-a");
  EXPECT_THROW(
      {
        try {
          c.group("weights").read_array("codes2");
        } catch (const GoldenError& e) {
          expect_contains_and_record(e.what(), "/case-a/weights/codes2: is a soft link to '/case-a/inputs/a'");
          throw;
        }
      },
      GoldenError);
  EXPECT_THROW(
      {
        try {
          c.group("inputs2");
        } catch (const GoldenError& e) {
          expect_contains_and_record(e.what(), "/case-a/inputs2: is a soft link to '/case-a/inputs'");
          throw;
        }
      },
      GoldenError);
}

TEST(GoldenFileErrors, TruncatedFileIsDetected) {
  ScratchDir dir("cut");
  write_golden_file(dir / "t.h5", current_provenance(), "unit", {sample_record("case-a")});
  const auto size = std::filesystem::file_size(dir / "t.h5");
  std::filesystem::resize_file(dir / "t.h5", size / 2);
  const std::string message = open_error(dir / "t.h5");
  expect_contains_and_record(message, "t.h5");
  expect_contains_and_record(message, "truncated file");
}

TEST(GoldenFileErrors, CorruptedInteriorIsAnErrorNotACrash) {
  ScratchDir dir("interior");
  write_golden_file(dir / "c.h5", current_provenance(), "unit", {sample_record("case-a")});
  // Overwrite everything after the superblock with a byte pattern: object headers become garbage.
  const auto size = std::filesystem::file_size(dir / "c.h5");
  {
    std::fstream f(dir / "c.h5", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(96);
    for (std::uintmax_t i = 96; i < size; ++i) f.put(char(0xA5));
  }
  expect_contains_and_record(open_error(dir / "c.h5"), "c.h5");
}

// A file of many cases keeps its root's links in dense storage: link messages in a fractal heap,
// whose direct blocks ("FHDB") carry no checksum, so a damaged byte there reaches HDF5's link
// decoding. Listing those links by index (getObjnameByIdx) made HDF5 1.10 free table entries it
// never initialised on such a file: `moeval golden --check` died of SIGSEGV on a bit-flipped copy
// of wna16.h5. Bits 0, 3 and 6 of each of the heap block's first 512 bytes (the links of the first
// ~20 cases) are flipped in turn; each copy must read, or give a GoldenError, and never crash or
// throw anything else.
TEST(GoldenFileErrors, DamagedLinkHeapIsAnErrorNotACrash) {
  ScratchDir dir("heap");
  std::vector<CaseRecord> records;
  for (int i = 0; i < 24; ++i) records.push_back(sample_record("case-" + std::to_string(i), i % 3));
  write_golden_file(dir / "h.h5", current_provenance(), "unit", records);
  std::string bytes;
  {
    std::ifstream in(dir / "h.h5", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::size_t heap = bytes.find("FHDB");
  ASSERT_NE(heap, std::string::npos) << "the root's links are no longer in a fractal heap; this test needs a file that "
                                        "keeps them there (more cases, or the writer's link storage)";
  const std::size_t end = std::min(bytes.size(), heap + 512);
  int errors = 0;
  int reads = 0;
  for (std::size_t at = heap + 4; at < end; ++at) {
    for (const int bit : {0, 3, 6}) {
      std::string damaged = bytes;
      damaged[at] = char(damaged[at] ^ (1 << bit));
      std::ofstream(dir / "d.h5", std::ios::binary | std::ios::trunc) << damaged;
      try {
        const GoldenReader reader(dir / "d.h5");
        reader.read_all();
        ++reads;
      } catch (const GoldenError& e) {
        ++errors;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << at - heap << " of the heap block, bit " << bit << ": not a GoldenError: " << e.what();
      }
    }
  }
  RecordProperty("errors", errors);
  RecordProperty("reads", reads);
  EXPECT_GT(errors, 0) << "no damage in the link heap was noticed: the test no longer reaches the link decoding";
}

TEST(GoldenFileErrors, WrongSchemaVersionSaysHowToRegenerate) {
  ScratchDir dir("schema");
  Provenance p = current_provenance();
  p.schema_version = kSchemaVersion + 41;
  write_golden_file(dir / "s.h5", p, "unit", {sample_record("case-a")});
  const std::string message = open_error(dir / "s.h5");
  expect_contains_and_record(message, "s.h5");
  expect_contains_and_record(message, "schema_version is " + std::to_string(kSchemaVersion + 41));
  expect_contains_and_record(message, "moeval golden --update");
}

TEST(GoldenFileErrors, PlainHdf5FileIsNotAGoldenFile) {
  ScratchDir dir("plain");
  H5::H5File(std::string(dir / "plain.h5"), H5F_ACC_TRUNC).close();
  const std::string message = open_error(dir / "plain.h5");
  expect_contains_and_record(message, "plain.h5");
  expect_contains_and_record(message, "no schema_version attribute");
}

TEST(GoldenFileErrors, MissingCaseAndWrongDatasetTypeAreNamed) {
  ScratchDir dir("case");
  write_golden_file(dir / "c.h5", current_provenance(), "unit", {sample_record("case-a")});
  try {
    GoldenReader(dir / "c.h5").read_case("case-zz");
    ADD_FAILURE() << "absent case read";
  } catch (const GoldenError& e) {
    expect_contains_and_record(e.what(), "case 'case-zz'");
  }
  // A dataset of an element type outside the schema (int64) is refused, naming its path.
  {
    H5::H5File f(std::string(dir / "c.h5"), H5F_ACC_RDWR);
    const hsize_t n = 2;
    const long long values[2] = {1, 2};
    f.openGroup("case-a")
        .createDataSet("odd", H5::PredType::STD_I64LE, H5::DataSpace(1, &n))
        .write(values, H5::PredType::NATIVE_LLONG);
  }
  const std::string message = open_error(dir / "c.h5");
  expect_contains_and_record(message, "/case-a/odd");
  expect_contains_and_record(message, "element type outside the schema");
}

}  // namespace
}  // namespace moeval::golden
