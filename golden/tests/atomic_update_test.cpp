// An interrupted rewrite leaves the old golden file intact and (when the writer could clean up)
// no temp file behind; a killed writer leaves the old file intact and a stale temp file that the
// next update removes.
#include <gtest/gtest.h>

#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "moeval/golden/atomic_write.h"
#include "moeval/golden/errors.h"
#include "moeval/golden/golden_file.h"
#include "test_support.h"

namespace moeval::golden {
namespace {

using testing::sample_record;
using testing::ScratchDir;

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted by the test after N datasets") {}
};

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().filename());
  std::sort(files.begin(), files.end());
  return files;
}

// The old file still reads back as written: one case "old" with salt 0.
void expect_old_file(const std::filesystem::path& path) {
  const GoldenReader reader(path);
  ASSERT_EQ(reader.case_names(), (std::vector<std::string>{"old"}));
  const CaseRecord stored = reader.read_case("old");
  EXPECT_EQ(stored.attributes, sample_record("old").attributes);
  EXPECT_EQ(stored.datasets.at("weights/codes").array.data,
            sample_record("old").datasets.at("weights/codes").array.data);
}

TEST(GoldenAtomicUpdate, WriterThatThrowsMidwayLeavesOldFileAndNoTemp) {
  ScratchDir dir("throw");
  const auto target = dir / "family.h5";
  write_golden_file(target, current_provenance(), "unit", {sample_record("old")});
  const auto old_size = std::filesystem::file_size(target);

  for (int stop_after : {1, 3, 8}) {
    SCOPED_TRACE(stop_after);
    int written = 0;
    EXPECT_THROW(
        write_golden_file(target, current_provenance(), "unit", {sample_record("new-1", 1), sample_record("new-2", 2)},
                          [&] {
                            if (++written == stop_after) throw Interrupted();
                          }),
        Interrupted);
    EXPECT_EQ(written, stop_after);  // it really stopped midway (each record has 6 datasets)
    EXPECT_EQ(files_in(dir.path()), (std::vector<std::filesystem::path>{"family.h5"}));
    EXPECT_EQ(std::filesystem::file_size(target), old_size);
    expect_old_file(target);
  }
}

TEST(GoldenAtomicUpdate, KilledWriterLeavesOldFileIntact) {
  ScratchDir dir("kill");
  const auto target = dir / "family.h5";
  write_golden_file(target, current_provenance(), "unit", {sample_record("old")});

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child never returns into gtest: 42 = killed midway as planned, 1 = anything else.
    try {
      int written = 0;
      // _exit skips every destructor and cleanup handler, like a crash or SIGKILL midway.
      write_golden_file(target, current_provenance(), "unit", {sample_record("new", 1)}, [&] {
        if (++written == 2) ::_exit(42);
      });
    } catch (...) {
    }
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 42);

  expect_old_file(target);
  // The file is built in memory and reaches the disk only in close(), so a writer killed while
  // writing datasets leaves no temp file at all. One killed during the final write(2) or fsync
  // does; StaleTempCleanupSparesLiveWriters covers its removal by the next update.
  EXPECT_EQ(files_in(dir.path()), (std::vector<std::filesystem::path>{"family.h5"}));
}

// Two updates at once: the second must not delete the temp file the first is still writing.
TEST(GoldenAtomicUpdate, StaleTempCleanupSparesLiveWriters) {
  ScratchDir dir("live");
  const auto target = dir / "family.h5";
  write_golden_file(target, current_provenance(), "unit", {sample_record("old")});
  auto live = target;
  live += ".tmp." + std::to_string(::getpid());  // this process is alive
  auto dead = target;
  dead += ".tmp.999999999";  // above any pid_max Linux allows (2^22)
  std::ofstream(live) << "in progress";
  std::ofstream(dead) << "left by a crash";
  EXPECT_EQ(remove_stale_temps(target), 1);
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_FALSE(std::filesystem::exists(dead));
  std::filesystem::remove(live);
}

TEST(GoldenAtomicUpdate, SuccessfulRewriteReplacesTheFile) {
  ScratchDir dir("replace");
  const auto target = dir / "family.h5";
  write_golden_file(target, current_provenance(), "unit", {sample_record("old")});
  write_golden_file(target, current_provenance(), "unit", {sample_record("new", 1)});
  EXPECT_EQ(GoldenReader(target).case_names(), (std::vector<std::string>{"new"}));
  EXPECT_EQ(files_in(dir.path()), (std::vector<std::filesystem::path>{"family.h5"}));
}

TEST(GoldenAtomicUpdate, MissingDirectoryIsAClearError) {
  ScratchDir dir("nodir");
  EXPECT_THROW(write_golden_file(dir / "no" / "such" / "f.h5", current_provenance(), "unit", {}), GoldenError);
}

}  // namespace
}  // namespace moeval::golden
