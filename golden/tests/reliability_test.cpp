// What goes wrong around a golden file rather than inside it: a file of another family under this
// name, counts of differing cases, a writer ended by a signal, a full disk.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "moeval/golden/atomic_write.h"
#include "moeval/golden/check.h"
#include "moeval/golden/diff.h"
#include "moeval/golden/errors.h"
#include "moeval/golden/golden_file.h"
#include "moeval/golden/loader.h"
#include "test_support.h"

namespace moeval::golden {
namespace {

using testing::sample_record;
using testing::ScratchDir;
namespace fs = std::filesystem;

fs::path committed(Family f) { return family_path(default_golden_dir(), f); }

std::string layer_check_error(const fs::path& dir) {
  const auto reports = check_corpus(dir, CorpusSelection{{Family::layer}, ""});
  if (reports.size() != 1 || !reports[0].error) return "(no error)";
  return *reports[0].error;
}

TEST(GoldenFamilyDetection, AnotherFamilysFileUnderThisNameIsNamed) {
  ScratchDir dir("family-root");
  fs::copy_file(committed(Family::wna16), dir / "layer.h5");
  EXPECT_EQ(layer_check_error(dir.path()),
            "golden file '" + (dir / "layer.h5").string() +
                "': is the wna16 file (its root attribute family = 'wna16'), not the layer file; was it copied or "
                "renamed onto layer.h5?");
}

TEST(GoldenFamilyDetection, AnotherFamilysCasesUnderThisRootAreNamed) {
  ScratchDir dir("family-cases");
  const GoldenReader marlin(committed(Family::marlin));
  write_golden_file(dir / "layer.h5", marlin.provenance(), "layer", marlin.read_all());
  const std::string error = layer_check_error(dir.path());
  const std::string n = std::to_string(marlin.case_names().size());
  EXPECT_NE(error.find("holds the cases of the marlin family (" + n + " of its " + n + " case names are marlin.h5 cases"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("this is the marlin file under the name layer.h5"), std::string::npos) << error;
}

TEST(GoldenFamilyDetection, OwnFileWithOneChangedCaseIsAnOrdinaryDiff) {
  ScratchDir dir("family-own");
  const GoldenReader layer(committed(Family::layer));
  std::vector<CaseRecord> cases = layer.read_all();
  cases.erase(cases.begin());  // one case missing: a difference, not a foreign file
  write_golden_file(dir / "layer.h5", layer.provenance(), "layer", cases);
  const auto reports = check_corpus(dir.path(), CorpusSelection{{Family::layer}, ""});
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_FALSE(reports[0].error) << *reports[0].error;
  EXPECT_EQ(differing_cases(reports[0].differences), 1u);
}

TEST(GoldenDiffCounts, DifferingCasesCountsCasesNotDifferences) {
  CaseRecord a = sample_record("one"), b = sample_record("one", 1);
  const auto diffs = diff_case(a, b);
  ASSERT_GT(diffs.size(), 1u) << "salt 1 changes several datasets of the one case";
  EXPECT_EQ(differing_cases(diffs), 1u);
  EXPECT_EQ(differing_cases(diff_cases({a, sample_record("two")}, {b, sample_record("two", 1)})), 2u);
  EXPECT_EQ(differing_cases({}), 0u);
}

// A writer ended by SIGTERM in the middle of writing removes its temp file, leaves the old file,
// and still dies of SIGTERM (its parent sees the real cause).
TEST(GoldenAtomicUpdate, SignalledWriterRemovesItsTempFile) {
  ScratchDir dir("signal");
  const fs::path target = dir / "family.h5";
  write_golden_file(target, current_provenance(), "unit", {sample_record("old")});
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    install_temp_cleanup();
    int written = 0;
    write_golden_file(target, current_provenance(), "unit", {sample_record("new", 1)}, [&] {
      if (++written == 2) ::kill(::getpid(), SIGTERM);
    });
    ::_exit(0);  // not reached: SIGTERM ended the writer
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(fs::exists(fs::path(target.string() + ".tmp." + std::to_string(child)))) << "temp file left behind";
  EXPECT_EQ(GoldenReader(target).case_names(), std::vector<std::string>{"old"});
}

// A real full disk: a 64 KiB tmpfs in a private mount namespace (root only). The write fails with
// the system's words, the old file is intact, no temp file remains, and nothing crashes.
TEST(GoldenAtomicUpdate, FullDiskIsOneClearError) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  ScratchDir dir("full");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", dir.path().c_str(), "tmpfs", 0, "size=64k") != 0) {
      ::_exit(77);
    }
    const fs::path target = dir / "layer.h5";
    write_golden_file(target, current_provenance(), "layer", {sample_record("old")});
    const GoldenReader layer(committed(Family::layer));
    int code = 1;
    try {
      write_golden_file(target, layer.provenance(), "layer", layer.read_all());
    } catch (const GoldenError& e) {
      const std::string what = e.what();
      const bool names_it = what.find("No space left on device") != std::string::npos &&
                            what.find(target.string()) != std::string::npos;
      std::error_code ec;
      const bool clean = !fs::exists(temp_path_for(target), ec);
      const bool old_intact = GoldenReader(target).case_names() == std::vector<std::string>{"old"};
      if (!names_it) std::fprintf(stderr, "message: %s\n", what.c_str());
      code = names_it && clean && old_intact ? 0 : 2;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the writer crashed: status " << status;
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot mount a tmpfs here (no mount namespace)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the full disk was not reported; 2: wrong message, temp left or old file lost";
}

}  // namespace
}  // namespace moeval::golden
