// A value altered in a committed golden file (a copy, edited with the HDF5 API) is caught by the
// corpus check and named: case, dataset, index, stored vs regenerated.
#include <H5Cpp.h>
#include <gtest/gtest.h>

#include "moeval/golden/check.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/loader.h"
#include "test_support.h"

namespace moeval::golden {
namespace {

using testing::ScratchDir;

// XORs `mask` into element `index` of an unsigned 8/16-bit dataset, in place.
template <class T>
void flip(const std::filesystem::path& file, const std::string& dataset, std::size_t index, T mask) {
  H5::H5File f(file.string(), H5F_ACC_RDWR);
  H5::DataSet ds = f.openDataSet(dataset);
  const auto type = sizeof(T) == 1 ? H5::PredType::NATIVE_UINT8 : H5::PredType::NATIVE_UINT16;
  std::vector<T> values(std::size_t(ds.getSpace().getSimpleExtentNpoints()));
  ds.read(values.data(), type);
  values.at(index) ^= mask;
  ds.write(values.data(), type);
}

TEST(GoldenAlteredCorpus, FlippedCodeLayoutWordAndOutputAreEachNamed) {
  ScratchDir dir("altered");
  const auto committed = family_path(default_golden_dir(), Family::wna16);
  const auto copy = family_path(dir.path(), Family::wna16);
  std::filesystem::copy_file(committed, copy);
  const std::string name = GoldenReader(copy).case_names().front();

  flip<std::uint8_t>(copy, name + "/weights/codes", 5, 0x1);
  flip<std::uint8_t>(copy, name + "/layouts/wna16/qweight", 0, 0x10);
  flip<std::uint16_t>(copy, name + "/expected/y16", 3, 0x1);

  const auto reports = check_corpus(dir.path(), {{Family::wna16}, name});
  ASSERT_EQ(reports.size(), 1u);
  ASSERT_FALSE(reports[0].error) << *reports[0].error;
  std::map<std::string, Difference> by_dataset;
  for (const Difference& d : reports[0].differences) by_dataset[d.dataset] = d;
  ASSERT_EQ(by_dataset.size(), 3u);
  for (const auto& [dataset, d] : by_dataset) {
    EXPECT_EQ(d.case_name, name);
    EXPECT_EQ(d.what, "value");
    EXPECT_EQ(d.differing, 1);
  }
  const GemmShape shape = load_gemm_case(committed, name).gemm.shape;
  // Element 5 of codes [E, K, N] and element 3 of y16 [rows, N], as multi-indices.
  EXPECT_EQ(by_dataset.at("weights/codes").index, (std::vector<std::int64_t>{0, 5 / shape.n, 5 % shape.n}));
  EXPECT_EQ(by_dataset.at("layouts/wna16/qweight").index, (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(by_dataset.at("expected/y16").index, (std::vector<std::int64_t>{3 / shape.n, 3 % shape.n}));

  // The untouched committed file is still identical.
  const auto clean = check_corpus(default_golden_dir(), {{Family::wna16}, name});
  ASSERT_EQ(clean.size(), 1u);
  EXPECT_TRUE(clean[0].differences.empty());
}

TEST(GoldenAlteredCorpus, UnknownCaseIsRefused) {
  EXPECT_THROW(check_corpus(default_golden_dir(), {{}, "no-such-case"}), std::invalid_argument);
}

TEST(GoldenAlteredCorpus, UpdateOfOneCaseRewritesOnlyThatCase) {
  ScratchDir dir("update-one");
  const auto copy = family_path(dir.path(), Family::wna16);
  std::filesystem::copy_file(family_path(default_golden_dir(), Family::wna16), copy);
  const std::vector<std::string> names = GoldenReader(copy).case_names();
  flip<std::uint8_t>(copy, names[0] + "/weights/codes", 0, 0x1);
  flip<std::uint8_t>(copy, names[1] + "/weights/codes", 0, 0x1);

  const auto updated = update_corpus(dir.path(), {{Family::wna16}, names[0]});
  ASSERT_EQ(updated.size(), 1u);
  EXPECT_TRUE(updated[0].rewritten);
  ASSERT_EQ(updated[0].differences.size(), 1u);  // what changed: the one repaired code
  EXPECT_EQ(updated[0].differences[0].case_name, names[0]);

  // names[0] is repaired, names[1] keeps its (altered) stored value, every other case is intact.
  const auto after = check_corpus(dir.path(), {{Family::wna16}, ""});
  ASSERT_EQ(after[0].differences.size(), 1u);
  EXPECT_EQ(after[0].differences[0].case_name, names[1]);
  EXPECT_EQ(GoldenReader(copy).case_names(), names);

  // A whole-file update repairs the rest; a second one finds nothing to do.
  EXPECT_TRUE(update_corpus(dir.path(), {{Family::wna16}, ""})[0].rewritten);
  const auto again = update_corpus(dir.path(), {{Family::wna16}, ""});
  EXPECT_FALSE(again[0].rewritten);
  EXPECT_TRUE(again[0].differences.empty());
}

// An update over a file that cannot be read says why and replaces it, rather than listing every
// regenerated case as "missing from the file".
TEST(GoldenAlteredCorpus, UpdateOfAnUnreadableFileSaysWhyAndReplacesIt) {
  ScratchDir dir("unreadable");
  const auto copy = family_path(dir.path(), Family::layer);
  std::filesystem::copy_file(family_path(default_golden_dir(), Family::layer), copy);
  std::filesystem::resize_file(copy, 65536);  // truncated: HDF5 cannot open it
  const auto updated = update_corpus(dir.path(), {{Family::layer}, ""});
  ASSERT_EQ(updated.size(), 1u);
  ASSERT_FALSE(updated[0].error) << *updated[0].error;
  ASSERT_TRUE(updated[0].replaced_unreadable);
  EXPECT_NE(updated[0].replaced_unreadable->find("truncated"), std::string::npos) << *updated[0].replaced_unreadable;
  EXPECT_TRUE(updated[0].differences.empty());
  EXPECT_TRUE(updated[0].rewritten);
  const auto again = check_corpus(dir.path(), {{Family::layer}, ""});
  ASSERT_FALSE(again[0].error) << *again[0].error;
  EXPECT_TRUE(again[0].differences.empty());
  EXPECT_FALSE(update_corpus(dir.path(), {{Family::layer}, ""})[0].replaced_unreadable);
}

// A file written from a tree with uncommitted changes records "<commit>-dirty". The check shows the
// mark (a 12-digit hash alone hid it); a whole-file update from a commit git calls clean now
// restamps the file although no case changed; a dirty or unknown tree, a commit from configure
// time (git unavailable: maybe stale), or one selected case, leaves it alone.
TEST(GoldenAlteredCorpus, ADirtyProvenanceIsShownAndRestampedOnlyFromACommitGitCallsClean) {
  ScratchDir dir("restamp");
  const auto copy = family_path(dir.path(), Family::layer);
  const GoldenReader committed(family_path(default_golden_dir(), Family::layer));
  Provenance dirty = committed.provenance();
  dirty.git_commit = std::string(40, 'a') + "-dirty";
  write_golden_file(copy, dirty, "layer", committed.read_all());

  const auto checked = check_corpus(dir.path(), {{Family::layer}, ""});
  ASSERT_EQ(checked.size(), 1u);
  EXPECT_TRUE(checked[0].differences.empty());
  EXPECT_TRUE(checked[0].stored_dirty);
  EXPECT_NE(checked[0].stored_provenance.find("at commit aaaaaaaaaaaa-dirty on"), std::string::npos)
      << checked[0].stored_provenance;

  Provenance still_dirty = current_provenance();
  still_dirty.git_commit = std::string(40, 'b') + "-dirty";
  still_dirty.commit_verified = true;
  Provenance unknown = current_provenance();
  unknown.git_commit = "unknown";
  unknown.commit_verified = false;
  Provenance configured = current_provenance();  // CMake's commit, git unavailable now: maybe stale
  configured.git_commit = std::string(40, 'd');
  configured.commit_verified = false;
  Provenance clean = current_provenance();
  clean.git_commit = std::string(40, 'c');
  clean.commit_verified = true;
  const std::string one_case = committed.case_names().front();
  for (const auto& [now, selection] : {std::pair{still_dirty, CorpusSelection{{Family::layer}, ""}},
                                       std::pair{unknown, CorpusSelection{{Family::layer}, ""}},
                                       std::pair{configured, CorpusSelection{{Family::layer}, ""}},
                                       std::pair{clean, CorpusSelection{{Family::layer}, one_case}}}) {
    const auto kept = update_corpus(dir.path(), selection, now);
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_FALSE(kept[0].rewritten) << now.git_commit << " " << selection.case_name;
    EXPECT_FALSE(kept[0].restamped) << now.git_commit << " " << selection.case_name;
    EXPECT_EQ(GoldenReader(copy).provenance().git_commit, dirty.git_commit);
  }

  const auto restamped = update_corpus(dir.path(), {{Family::layer}, ""}, clean);
  ASSERT_EQ(restamped.size(), 1u);
  EXPECT_TRUE(restamped[0].restamped);
  EXPECT_TRUE(restamped[0].rewritten);
  EXPECT_TRUE(restamped[0].differences.empty());
  EXPECT_EQ(GoldenReader(copy).provenance().git_commit, clean.git_commit);
  const auto after = check_corpus(dir.path(), {{Family::layer}, ""});
  EXPECT_FALSE(after[0].stored_dirty);
  EXPECT_TRUE(after[0].differences.empty());
  EXPECT_FALSE(update_corpus(dir.path(), {{Family::layer}, ""}, clean)[0].rewritten);
}

}  // namespace
}  // namespace moeval::golden
