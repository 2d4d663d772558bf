// --json PATH: what ReportFile does with each kind of path. It follows a symlink (the link stays a
// link), writes into a device without replacing it, rejects what it cannot write before the run
// with the system's reason, and leaves no temp file behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "exit_codes.h"
#include "report_file.h"
#include "text_file.h"

namespace moeval::cli {
namespace {

namespace fs = std::filesystem;

class ReportFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("moeval-report-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all);
    fs::remove_all(dir_);
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  bool no_temp_files() const {
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().find(".tmp.") != std::string::npos) return false;
    }
    return true;
  }
  fs::path dir_;
};

// read_first_line stops at the first newline (a results.jsonl's header, without reading its many
// result lines), also where that line spans several reads, and reports a directory as such.
TEST_F(ReportFileTest, FirstLineIsReadAlone) {
  const std::string long_line(200000, 'x');  // longer than one read of 64 KiB
  std::ofstream(dir_ / "lines") << long_line << "\nsecond\nthird";
  EXPECT_EQ(read_first_line(dir_ / "lines"), long_line);
  std::ofstream(dir_ / "one") << "no newline at all";
  EXPECT_EQ(read_first_line(dir_ / "one"), "no newline at all");
  std::ofstream(dir_ / "empty").flush();
  EXPECT_EQ(read_first_line(dir_ / "empty"), "");
  EXPECT_THROW(
      {
        try {
          read_first_line(dir_);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "Is a directory");
          throw;
        }
      },
      std::runtime_error);
}

TEST_F(ReportFileTest, NewFileGetsProgressThenTheFinalReport) {
  const fs::path path = dir_ / "r.json";
  ReportFile report(path.string());
  EXPECT_FALSE(fs::exists(path)) << "nothing is written before the first result";
  report.progress({{"rows", 1}});
  EXPECT_EQ(nlohmann::json::parse(read(path))["complete"], false);
  report.finish({{"rows", 2}});
  const auto j = nlohmann::json::parse(read(path));
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["rows"], 2);
  EXPECT_TRUE(no_temp_files());
}

TEST_F(ReportFileTest, SymlinkIsFollowedNotReplaced) {
  const fs::path target = dir_ / "real.json";
  const fs::path link = dir_ / "link.json";
  std::ofstream(target) << "old";
  fs::create_symlink("real.json", link);  // relative, resolved against the link's directory
  ReportFile report(link.string());
  report.finish({{"x", 1}});
  EXPECT_TRUE(fs::is_symlink(link)) << "the link must stay a link";
  EXPECT_EQ(nlohmann::json::parse(read(target))["x"], 1);
  EXPECT_TRUE(no_temp_files());
}

TEST_F(ReportFileTest, DeviceNodeIsWrittenInPlace) {
  ReportFile report("/dev/null");
  report.progress({{"x", 1}});
  report.finish({{"x", 1}});
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null must still be a character device";
}

TEST_F(ReportFileTest, FullDeviceSaysNoSpaceLeft) {
  ReportFile report("/dev/full");
  try {
    report.finish({{"x", 1}});
    FAIL() << "writing to /dev/full must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cannot write the JSON report '/dev/full': No space left on device");
  }
}

TEST_F(ReportFileTest, MissingDirectoryIsRejectedBeforeTheRun) {
  const std::string path = (dir_ / "missing" / "r.json").string();
  try {
    ReportFile report(path);
    FAIL() << "a report in a missing directory must be rejected at construction";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write the JSON report '" + path + "': its directory '" + (dir_ / "missing").string() +
                  "' does not exist");
  }
}

TEST_F(ReportFileTest, DirectoryIsRejected) {
  EXPECT_THROW(ReportFile(dir_.string()), UsageError);
}

TEST_F(ReportFileTest, UnwritableDirectoryGivesTheSystemReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only directory; the read-only mount row covers it";
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  try {
    ReportFile report((dir_ / "r.json").string());
    FAIL() << "must be rejected";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("Permission denied"), std::string::npos) << e.what();
  }
}

TEST_F(ReportFileTest, StaleTempOfADeadWriterIsRemoved) {
  const fs::path path = dir_ / "r.json";
  // pid 2^22 + 1 exceeds Linux's pid_max limit, so no process can own it.
  std::ofstream(path.string() + ".tmp.4194305") << "half a report";
  ReportFile report(path.string());
  EXPECT_TRUE(no_temp_files());
}

// Every atomic write of the reports (report.json, results.csv, junit.xml, a merge's files) clears
// the temp file a SIGKILL left for its target; only results.jsonl's and --json's were cleared.
TEST_F(ReportFileTest, AnAtomicWriteRemovesTheTempOfADeadWriter) {
  const fs::path path = dir_ / "report.json";
  std::ofstream(path.string() + ".tmp.4194305") << "half a report";
  const fs::path live = path.string() + ".tmp." + std::to_string(::getppid());  // a running process's: kept
  std::ofstream(live) << "being written";
  write_text_file_atomically(path, "{}\n");
  EXPECT_EQ(read(path), "{}\n");
  EXPECT_FALSE(fs::exists(path.string() + ".tmp.4194305"));
  EXPECT_TRUE(fs::exists(live));
}

// A replaced --json report keeps its permission bits, whatever the umask (one atomic-replace path
// for every report file now; ReportFile had its own).
TEST_F(ReportFileTest, AReplacedReportKeepsItsMode) {
  const fs::path path = dir_ / "r.json";
  std::ofstream(path) << "old";
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ReportFile report(path.string());
  report.progress({{"x", 1}});
  report.finish({{"x", 2}});
  EXPECT_EQ(fs::status(path).permissions(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(nlohmann::json::parse(read(path))["x"], 2);
  EXPECT_TRUE(no_temp_files());
}

// What read_text_file answers for `path`, from a child process killed after 10 s: a FIFO without
// a writer once blocked open() for ever, and a test of it must not hang with it.
std::string read_outcome_in_child(const fs::path& path) {
  int out[2];
  if (::pipe(out) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(out[0]);
    std::string outcome;
    try {
      outcome = "read " + std::to_string(read_text_file(path).size()) + " bytes";
    } catch (const std::exception& e) {
      outcome = std::string("refused: ") + e.what();
    }
    write_all(out[1], outcome);
    ::_exit(0);
  }
  ::close(out[1]);
  for (int waited = 0; waited < 1000; ++waited) {
    if (::waitpid(child, nullptr, WNOHANG) == child) {
      std::string outcome;
      char buffer[512];
      for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;) outcome.append(buffer, std::size_t(n));
      ::close(out[0]);
      return outcome;
    }
    ::usleep(10000);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(out[0]);
  return "blocked for 10 s";
}

// Only regular files are read, and only up to kMaxTextFileBytes: a FIFO (`bench --compare`, a
// report.json linked to one) hung the command, and /dev/zero or a huge file grew one string until
// the allocation failed gigabytes later.
TEST_F(ReportFileTest, ReadingRefusesWhatIsNotARegularFileOrTooLargeWithoutBlocking) {
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_outcome_in_child(fifo), "refused: is a FIFO, not a regular file");
  EXPECT_EQ(read_outcome_in_child("/dev/zero"), "refused: is a character device, not a regular file");
  EXPECT_EQ(read_outcome_in_child(dir_), "refused: Is a directory");

  const fs::path huge = dir_ / "huge.json";
  std::ofstream(huge).close();
  fs::resize_file(huge, kMaxTextFileBytes + 1);  // sparse: no disk space taken
  EXPECT_EQ(read_outcome_in_child(huge),
            "refused: is " + std::to_string(kMaxTextFileBytes + 1) + " bytes; report and bench files are read up to 1024 MiB");

  const fs::path small = dir_ / "small.json";
  std::ofstream(small) << "{}\n";
  EXPECT_EQ(read_outcome_in_child(small), "read 3 bytes");
}

}  // namespace
}  // namespace moeval::cli
