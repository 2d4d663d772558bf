// The HDF5 adapter stores every schema type and reads back exactly what was written.
#include <gtest/gtest.h>

#include "moeval/golden/golden_file.h"
#include "test_support.h"

namespace moeval::golden {
namespace {

using testing::sample_record;
using testing::ScratchDir;

void expect_same(const CaseRecord& a, const CaseRecord& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.attributes, b.attributes);
  ASSERT_EQ(a.datasets.size(), b.datasets.size());
  for (const auto& [path, d] : a.datasets) {
    SCOPED_TRACE(path);
    ASSERT_TRUE(b.datasets.count(path));
    const Array& x = d.array;
    const Array& y = b.datasets.at(path).array;
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_EQ(x.float16, y.float16);
    EXPECT_EQ(x.data, y.data);
  }
}

TEST(GoldenH5, EveryElementTypeAttributeAndEmptyDatasetRoundTrips) {
  ScratchDir dir("roundtrip");
  const Provenance p = current_provenance();
  const std::vector<CaseRecord> cases{sample_record("case-b", 1), sample_record("case-a")};
  write_golden_file(dir / "f.h5", p, "unit", cases);

  const GoldenReader reader(dir / "f.h5");
  EXPECT_EQ(reader.family(), "unit");
  EXPECT_EQ(reader.provenance().schema_version, kSchemaVersion);
  EXPECT_EQ(reader.provenance().generator_version, kGeneratorVersion);
  EXPECT_EQ(reader.provenance().git_commit, p.git_commit);
  EXPECT_EQ(reader.provenance().date, p.date);
  EXPECT_EQ(reader.provenance().reference_backend, kReferenceBackend);
  EXPECT_EQ(reader.case_names(), (std::vector<std::string>{"case-a", "case-b"}));
  expect_same(cases[1], reader.read_case("case-a"));
  expect_same(cases[0], reader.read_case("case-b"));
}

TEST(GoldenH5, ProvenanceIsAFullCommitHashOrUnknownAndAnIsoDate) {
  const Provenance p = current_provenance();
  // A source tree without .git (a release tarball) honestly says "unknown"; uncommitted changes to
  // the generating code add "-dirty".
  const std::string hash = p.git_commit.substr(0, 40);
  const bool is_hash = hash.size() == 40 && hash.find_first_not_of("0123456789abcdef") == std::string::npos &&
                       (p.git_commit.size() == 40 || p.git_commit.substr(40) == "-dirty");
  EXPECT_TRUE(is_hash || p.git_commit == "unknown") << p.git_commit;
  ASSERT_EQ(p.date.size(), 20u) << p.date;  // e.g. 2026-11-29T17:00:00Z
  EXPECT_EQ(p.date[10], 'T');
  EXPECT_EQ(p.date.back(), 'Z');
}

TEST(GoldenH5, ShapeMismatchIsRefusedBeforeWriting) {
  EXPECT_THROW(make_array<std::uint8_t>({2, 2}, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(make_array<std::uint8_t>({2}, {1, 2}, DType::f16), std::invalid_argument);
}

}  // namespace
}  // namespace moeval::golden
