// `moeval check` as a user runs it, on the CPU (GPU jobs are SKIPPED without a device): --list
// needs no GPU and runs nothing, the launchers' environment picks the shard, the shards' reports
// merge into the single run's report, and Ctrl-C still writes the partial report.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "report_comparison.h"
#include "signalled_run.h"

namespace {

namespace fs = std::filesystem;
namespace test_support = moeval::cli::test_support;

struct Outcome {
  int exit = -1;
  std::string output;
};

// A shell command line, its stdout and stderr together.
Outcome shell(const std::string& command) {
  Outcome r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  const int status = ::pclose(pipe);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// `env` is prepended to the command ("VAR=value ..."), the way a launcher sets it.
Outcome run(const std::string& args, const std::string& env = "") {
  return shell(env + " " + std::string(MOEVAL_BINARY) + " " + args);
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

std::size_t count_lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

class CheckCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("moeval-check-cli-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CheckCli, ListPrintsTheJobsAndRunsNothing) {
  const Outcome r = run("check --matrix quick --list --out " + (dir_ / "never").string());
  EXPECT_EQ(r.exit, 0) << r.output;
  EXPECT_NE(r.output.find("30 jobs of the quick matrix; nothing was run"), std::string::npos) << r.output;
  EXPECT_EQ(count_lines(r.output), 31u) << r.output;
  EXPECT_NE(r.output.find("golden wna16.h5"), std::string::npos);
  EXPECT_NE(r.output.find("moe_forward[marlin] layer-"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "never")) << "--list writes no report";
}

TEST_F(CheckCli, ShardFromTheLaunchersEnvironment) {
  const Outcome slurm = run("check --matrix quick --list", "SLURM_PROCID=1 SLURM_NTASKS=2");
  EXPECT_NE(slurm.output.find("15 jobs of the quick matrix in shard 1/2 (of 30 selected)"), std::string::npos) << slurm.output;
  const Outcome option = run("check --matrix quick --list --shard 5/7");
  EXPECT_NE(option.output.find("4 jobs of the quick matrix in shard 5/7 (of 30 selected)"), std::string::npos) << option.output;
  const Outcome bad = run("check --matrix quick --list --shard 2/2");
  EXPECT_EQ(bad.exit, 2);
  EXPECT_NE(bad.output.find("--shard: '2/2': INDEX must be 0..1 (shards count from 0)"), std::string::npos) << bad.output;
  const Outcome none = run("check --matrix quick --list --filter kernel=cutlass");
  EXPECT_EQ(none.exit, 2);
  EXPECT_NE(none.output.find("--filter 'kernel=cutlass' selects none of the 30 jobs of the quick matrix"), std::string::npos)
      << none.output;
  const Outcome ompi = run("check --matrix quick --list", "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=4");
  EXPECT_NE(ompi.output.find("8 jobs of the quick matrix in shard 0/4 (of 30 selected)"), std::string::npos) << ompi.output;
}

using moeval::cli::testing::without_timing;

TEST_F(CheckCli, ShardsMergeIntoTheSingleRunReport) {
  // Two golden families (real CPU work) and the GEMM jobs (SKIPPED without a device).
  const std::string selection = "check --cpu-only --matrix quick --filter 'id=golden layer.h5|golden marlin.h5|wna16_moe *'";
  const Outcome single = run(selection + " --out " + (dir_ / "single").string());
  ASSERT_EQ(single.exit, 0) << single.output;
  for (int i = 0; i < 3; ++i) {
    const Outcome shard = run(selection + " --shard " + std::to_string(i) + "/3 --out " + (dir_ / "sharded").string());
    ASSERT_EQ(shard.exit, 0) << shard.output;
  }
  ASSERT_TRUE(fs::exists(dir_ / "sharded" / "shard-2-of-3" / "junit.xml"));
  const Outcome merge = run("report merge --out " + (dir_ / "merged").string() + " " + (dir_ / "sharded").string());
  ASSERT_EQ(merge.exit, 0) << merge.output;
  EXPECT_NE(merge.output.find("report merge: 3 shards into"), std::string::npos) << merge.output;
  const nlohmann::json one = read_json(dir_ / "single" / "report.json");
  const nlohmann::json merged = read_json(dir_ / "merged" / "report.json");
  EXPECT_EQ(one["summary"]["passed"], 2);
  EXPECT_GT(one["summary"]["skipped"].get<int>(), 0);
  EXPECT_EQ(without_timing(merged), without_timing(one));
  // The merged directory is a complete report too: its lines load back to the same report.
  EXPECT_TRUE(fs::exists(dir_ / "merged" / "results.csv"));
  const Outcome again = run("report merge --out " + (dir_ / "again").string() + " " + (dir_ / "merged").string());
  ASSERT_EQ(again.exit, 0) << again.output;
  EXPECT_EQ(without_timing(read_json(dir_ / "again" / "report.json")), without_timing(one));
  // A missing shard is refused.
  const Outcome partial = run("report merge --out " + (dir_ / "bad").string() + " " + (dir_ / "sharded" / "shard-0-of-3").string());
  EXPECT_EQ(partial.exit, 2);
  EXPECT_NE(partial.output.find("shard 1/3 is missing"), std::string::npos) << partial.output;
}

// A full disk: `report merge` renamed a truncated results.jsonl into place. Needs root (a 64 KiB
// tmpfs in a private mount namespace, as the catalogue's {full} rows).
TEST_F(CheckCli, MergeOnAFullDiskLeavesNoTruncatedFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  const fs::path runs = dir_ / "run", full = dir_ / "full";
  ASSERT_EQ(run("check --cpu-only --filter 'kind!=golden' --out " + runs.string()).exit, 0);  // some 300 KB of lines
  fs::create_directories(full);
  const std::string script = "mount -t tmpfs -o size=64k tmpfs " + full.string() + " || exit 99; " + MOEVAL_BINARY +
                             " report merge --out " + full.string() + "/m " + runs.string() + "; echo rc=$?; ls -A " +
                             full.string() + "/m; echo end";
  const Outcome r = shell("unshare -m sh -c '" + script + "'");
  if (r.exit == 99) GTEST_SKIP() << "cannot mount a tmpfs here: " << r.output;
  EXPECT_NE(r.output.find("cannot write the merged report '" + full.string() + "/m/results.jsonl': No space left on device"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("rc=2\nend\n"), std::string::npos) << "the directory must be empty:\n" << r.output;
}

// Every file under `dir`, with its bytes: what "nothing was written" is compared against.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    files[e.path().string()] = text.str();
  }
  return files;
}

// The quick matrix without the golden families: a second's work, every job SKIPPED here.
const std::string kQuickGpuJobs = "check --cpu-only --matrix quick --filter 'kind!=golden'";

// --out among the inputs overwrote one (--out SHARD_DIR) or mixed the merged report into them:
// refused before anything is written, as is an input inside --out.
TEST_F(CheckCli, MergeRefusesAnOutAmongItsInputs) {
  const fs::path runs = dir_ / "runs";
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(run(kQuickGpuJobs + " --shard " + std::to_string(i) + "/2 --out " + runs.string()).exit, 0);
  }
  const auto before = snapshot(dir_);
  for (const fs::path& out : {runs / "shard-0-of-2", runs, runs / "shard-7-of-9", runs / "shard-x" / "m", dir_,
                              fs::path(runs.string() + "/")}) {
    const Outcome r = run("report merge --out " + out.string() + " " + runs.string());
    EXPECT_EQ(r.exit, 2) << out << "\n" << r.output;
    EXPECT_NE(r.output.find("write the merged report elsewhere (nothing was written)"), std::string::npos) << r.output;
    EXPECT_EQ(snapshot(dir_), before) << "--out " << out;
  }
  // The message names the directory --out collides with: the shard, not the directory given.
  const Outcome shard = run("report merge --out " + (runs / "shard-0-of-2").string() + " " + runs.string());
  EXPECT_NE(shard.output.find("--out '" + (runs / "shard-0-of-2").string() + "' is the input directory '" +
                              (runs / "shard-0-of-2").string() + "'"),
            std::string::npos)
      << shard.output;
  // A shard-* directory inside the input would be taken for a shard by the next merge of it.
  const Outcome named = run("report merge --out " + (runs / "shard-7-of-9").string() + " " + runs.string());
  EXPECT_NE(named.output.find("is named like a shard directory inside the input directory '" + runs.string() + "'"),
            std::string::npos)
      << named.output;
  const Outcome inside = run("report merge --out " + runs.string() + "/shard-0-of-2/m " + (runs / "shard-0-of-2").string() + " " +
                             (runs / "shard-1-of-2").string());
  EXPECT_EQ(inside.exit, 2) << inside.output;
  EXPECT_NE(inside.output.find("lies inside the input directory '" + (runs / "shard-0-of-2").string() + "'"), std::string::npos)
      << inside.output;
  const Outcome elsewhere = run("report merge --out " + (dir_ / "merged").string() + " " + runs.string());
  EXPECT_EQ(elsewhere.exit, 0) << elsewhere.output;
  // Beside the shards, under another name, the merged report is harmless: a merge of `runs` reads
  // only its shard-* directories. This worked before --out was checked, and must still.
  const Outcome beside = run("report merge --out " + (runs / "merged").string() + " " + runs.string());
  EXPECT_EQ(beside.exit, 0) << beside.output;
  const Outcome again = run("report merge --out " + (dir_ / "merged-again").string() + " " + runs.string());
  EXPECT_EQ(again.exit, 0) << again.output;
}

// A merge into a directory whose previous report cannot be cleared (its junit.xml is a directory)
// changes nothing there: the previous merge's results.jsonl used to be replaced first.
TEST_F(CheckCli, AMergeThatCannotClearItsOutChangesNothing) {
  const fs::path runs = dir_ / "runs", merged = dir_ / "merged";
  ASSERT_EQ(run(kQuickGpuJobs + " --out " + runs.string()).exit, 0);
  ASSERT_EQ(run("report merge --out " + merged.string() + " " + runs.string()).exit, 0);
  fs::remove(merged / "junit.xml");
  fs::create_directories(merged / "junit.xml" / "inside");
  const auto before = snapshot(merged);
  ASSERT_EQ(run(kQuickGpuJobs + " --out " + runs.string()).exit, 0);  // a new run: another header
  const Outcome r = run("report merge --out " + merged.string() + " " + runs.string());
  EXPECT_EQ(r.exit, 2) << r.output;
  EXPECT_NE(r.output.find("'" + (merged / "junit.xml").string() + "' is a directory, not a report file"), std::string::npos)
      << r.output;
  EXPECT_EQ(snapshot(merged), before);
  for (const auto& e : fs::directory_iterator(merged)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temp left: " << e.path();
  }
}

// An empty value is not "not given": `golden --update --dir ''` rewrote the default corpus, and
// `check --out ''` / `--json ''` wrote nothing and said nothing.
TEST_F(CheckCli, AnEmptyPathIsAUsageError) {
  for (const char* args : {"check --out ''", "check --json ''", "check --repro-dir ''", "check --golden-dir ''",
                           "check --repro ''", "check --shard ''", "sweep --out ''", "sweep --json ''", "golden --dir ''",
                           "golden --update --dir ''", "golden --case ''", "bench --json ''", "bench --shapes ''",
                           "bench --compare '' /etc/passwd", "report merge --out '' /tmp", "report merge --out /tmp ''",
                           "show ''"}) {
    const Outcome r = run(args);
    EXPECT_EQ(r.exit, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(": an empty value is not allowed; give "), std::string::npos) << args << "\n" << r.output;
  }
  // The default corpus is untouched.
  const fs::path corpus = dir_ / "corpus";
  fs::create_directories(corpus);
  std::ofstream(corpus / "layer.h5") << "not the layer file";
  const Outcome update = run("golden --update --family layer --dir ''", "MOEVAL_GOLDEN_DIR=" + corpus.string());
  EXPECT_EQ(update.exit, 2) << update.output;
  EXPECT_EQ(snapshot(corpus).begin()->second, "not the layer file");
}

// The collapsed "SKIPPED  gpu tier (N jobs)" line counted as one skipped on stdout and in --json
// while report.json and junit.xml said N.
TEST_F(CheckCli, EveryCountIsOfJobs) {
  const fs::path out = dir_ / "report", json = dir_ / "r.json";
  const Outcome r = run(kQuickGpuJobs + " --out " + out.string() + " --json " + json.string());
  ASSERT_EQ(r.exit, 0) << r.output;
  const nlohmann::json report = read_json(out / "report.json");
  const long skipped = report["summary"]["skipped"].get<long>();
  EXPECT_EQ(skipped, long(report["checks"].size()));
  EXPECT_GT(skipped, 1);
  EXPECT_NE(r.output.find("SKIPPED  gpu tier (" + std::to_string(skipped) + " jobs)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check: 0 passed, 0 failed, " + std::to_string(skipped) + " skipped"), std::string::npos) << r.output;
  const nlohmann::json summary = read_json(json);
  EXPECT_EQ(summary["skipped"], skipped);
  EXPECT_EQ(summary["passed"], 0);
  std::ifstream junit(out / "junit.xml");
  std::stringstream xml;
  xml << junit.rdbuf();
  EXPECT_NE(xml.str().find("skipped=\"" + std::to_string(skipped) + "\""), std::string::npos);
}

// --golden-dir is checked before any work and any write: a missing directory, a file, or a corrupt
// golden file used to be FAIL lines and exit 1, after --out had replaced a good report.
TEST_F(CheckCli, ABadGoldenDirIsRefusedBeforeAnyWork) {
  const fs::path out = dir_ / "report";
  ASSERT_EQ(run(kQuickGpuJobs + " --out " + out.string()).exit, 0);
  const auto before = snapshot(out);
  const fs::path corrupt = dir_ / "corrupt";
  fs::create_directories(corrupt);
  std::ofstream(corrupt / "layer.h5") << "not hdf5\n";
  const std::string golden = "check --cpu-only --matrix quick --filter 'id=golden layer.h5' --out " + out.string();
  struct Bad {
    std::string dir, message;
  };
  for (const Bad& bad : {Bad{(dir_ / "none").string(), "golden directory '" + (dir_ / "none").string() + "' does not exist"},
                         Bad{"/etc/passwd", "golden directory '/etc/passwd' is not a directory"},
                         Bad{corrupt.string(), "golden file '" + (corrupt / "layer.h5").string() + "': is not an HDF5 file"},
                         Bad{dir_.string(), "golden file '" + (dir_ / "layer.h5").string() + "': does not exist"}}) {
    const Outcome r = run(golden + " --golden-dir " + bad.dir);
    EXPECT_EQ(r.exit, 2) << r.output;
    EXPECT_NE(r.output.find("moeval check: error: " + bad.message), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
    EXPECT_EQ(snapshot(out), before) << "the previous report was touched";
  }
  // Given, it is checked even when no golden job is selected (and with --list).
  const Outcome listed = run("check --matrix quick --list --filter kind=gemm1 --golden-dir " + (dir_ / "none").string());
  EXPECT_EQ(listed.exit, 2) << listed.output;
  const Outcome help = run("check --help");
  EXPECT_NE(help.output.find("$MOEVAL_GOLDEN_DIR, else the source tree's golden/data"), std::string::npos) << help.output;
}

// A --repro-dir given on the command line is refused before the run when it cannot be written (a
// failing case's file would be lost after the run that found it), by check and by sweep (exit 2,
// not a sweep's 3 without a GPU); --list writes nothing and does not check it; the default
// (moeval-repro in the working directory) is made only when a case fails, so a run from a
// directory where it cannot be made still runs.
TEST_F(CheckCli, AGivenReproDirIsCheckedBeforeTheRunTheDefaultIsNot) {
  const fs::path file = dir_ / "moeval-repro";
  std::ofstream(file) << "a file where the default directory would go\n";
  for (const char* command : {"check --cpu-only --matrix quick", "sweep --matrix quick"}) {
    const Outcome r = run(std::string(command) + " --repro-dir " + file.string());
    EXPECT_EQ(r.exit, 2) << command << "\n" << r.output;
    EXPECT_NE(r.output.find("cannot write --repro-dir '" + file.string() + "': Not a directory"), std::string::npos)
        << command << "\n" << r.output;
    EXPECT_EQ(r.output.find("PASS"), std::string::npos) << "a job ran: " << r.output;
  }
  EXPECT_EQ(run("check --matrix quick --list --repro-dir " + file.string()).exit, 0);
  const std::string in_dir = "cd " + dir_.string() + " && " + MOEVAL_BINARY + " ";
  const Outcome by_default = shell(in_dir + kQuickGpuJobs);
  EXPECT_EQ(by_default.exit, 0) << by_default.output;
}

// --repro replays a file: the selection options it would ignore are refused.
TEST_F(CheckCli, ReproTakesNoSelectionOption) {
  const std::string repro = "check --repro " + std::string(MOEVAL_GOLDEN_DATA) + "/wna16.h5";
  for (const char* option : {"--matrix quick", "--filter kind=golden", "--seeds 2", "--shard 0/2", "--list",
                             "--golden-dir /tmp", "--repro-dir /tmp", "--cpu-only", "--out /tmp/x", "--json /tmp/x.json"}) {
    const Outcome r = run(repro + " " + option);
    EXPECT_EQ(r.exit, 2) << option << "\n" << r.output;
    const std::string name = std::string(option).substr(0, std::string(option).find(' '));
    EXPECT_TRUE(r.output.find(name + " excludes --repro") != std::string::npos ||
                r.output.find("--repro excludes " + name) != std::string::npos)
        << option << "\n" << r.output;
  }
}

// Inside an sbatch script (SLURM_PROCID=0 for every process), `mpirun -np N moeval check` takes
// each rank from MPI, the inner launcher; every rank used to be shard 0.
TEST_F(CheckCli, MpiRankWinsOverAnOuterSlurmStep) {
  const Outcome r =
      run("check --matrix quick --list", "SLURM_PROCID=0 SLURM_NTASKS=16 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2");
  EXPECT_NE(r.output.find("15 jobs of the quick matrix in shard 1/2 (of 30 selected)"), std::string::npos) << r.output;
}

// --json in the --out directory this run creates works on the first run; --json onto one of the
// report directory's own files is refused (it clobbered results.jsonl).
TEST_F(CheckCli, JsonBesideTheReportDirectory) {
  const fs::path out = dir_ / "new";
  const Outcome first = run(kQuickGpuJobs + " --out " + out.string() + " --json " + (out / "summary.json").string());
  ASSERT_EQ(first.exit, 0) << first.output;
  EXPECT_EQ(read_json(out / "summary.json")["complete"], true);
  const auto before = snapshot(out);
  for (const std::string& own : {std::string("results.jsonl"), std::string("report.json"), std::string("junit.xml")}) {
    const Outcome r = run(kQuickGpuJobs + " --out " + out.string() + " --json " + (out / own).string());
    EXPECT_EQ(r.exit, 2) << r.output;
    EXPECT_NE(r.output.find("is the report directory's own " + own), std::string::npos) << r.output;
    EXPECT_EQ(snapshot(out), before);
  }
  const Outcome shard = run(kQuickGpuJobs + " --shard 0/2 --out " + out.string() + " --json " +
                            (out / "shard-0-of-2" / "results.csv").string());
  EXPECT_EQ(shard.exit, 2) << shard.output;
  // A shard's --json onto DIR/report.json would make DIR hold a report beside its shards.
  const Outcome beside = run(kQuickGpuJobs + " --shard 0/2 --out " + (dir_ / "sharded").string() + " --json " +
                             (dir_ / "sharded" / "report.json").string());
  EXPECT_EQ(beside.exit, 2) << beside.output;
  EXPECT_NE(beside.output.find("(--out writes the shards' reports beside it)"), std::string::npos) << beside.output;
}

// The same with --out not created yet and the paths spelt differently: the check compared the
// paths as given when no part of them existed, and the report overwrote the --json output.
TEST_F(CheckCli, JsonOntoAReportFileOfANewOutIsRefused) {
  const std::string in_dir = "cd " + dir_.string() + " && " + MOEVAL_BINARY + " ";
  for (const std::string& json : {dir_.string() + "/r6/report.json", std::string("./r6/../r6/results.jsonl"),
                                  std::string("r6//junit.xml")}) {
    const Outcome r = shell(in_dir + kQuickGpuJobs + " --out r6 --json " + json);
    EXPECT_EQ(r.exit, 2) << json << "\n" << r.output;
    EXPECT_NE(r.output.find("--json '" + json + "' is the report directory's own "), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir_ / "r6")) << json << ": refused before anything is written";
  }
  // A shard's --json onto the shared directory's report.json, the shard directory not there yet.
  const Outcome shard = shell(in_dir + kQuickGpuJobs + " --shard 1/2 --out s --json " + dir_.string() + "/s/report.json");
  EXPECT_EQ(shard.exit, 2) << shard.output;
  EXPECT_NE(shard.output.find("(--out writes the shards' reports beside it)"), std::string::npos) << shard.output;
  // Another file of the new directory is fine.
  const Outcome ok = shell(in_dir + kQuickGpuJobs + " --out r6 --json ./r6/../r6/summary.json");
  EXPECT_EQ(ok.exit, 0) << ok.output;
  EXPECT_EQ(read_json(dir_ / "r6" / "summary.json")["complete"], true);
  EXPECT_EQ(read_json(dir_ / "r6" / "report.json")["complete"], true);
}

// Arguments and paths may be any bytes: the run header (argv) and a merge's merged_from (paths)
// with invalid UTF-8 made nlohmann throw half-way ("[json.exception.type_error.316] ..."), exit 2
// with a temp file and an open descriptor left. They are written with U+FFFD instead.
TEST_F(CheckCli, PathsThatAreNotUtf8AreReportedNotFatal) {
  const std::string in_dir = "cd " + dir_.string() + " && " + MOEVAL_BINARY + " ";
  const Outcome r = shell(in_dir + kQuickGpuJobs + " --out \"$(printf 'r\\377')\" --repro-dir \"$(printf 'rd\\377')\"");
  ASSERT_EQ(r.exit, 0) << r.output;
  const fs::path out = dir_ / "r\xff";
  ASSERT_TRUE(fs::exists(out / "report.json")) << r.output;
  EXPECT_NE(read_json(out / "report.json")["run"]["command"].get<std::string>().find("rd\xEF\xBF\xBD"), std::string::npos);
  for (const auto& e : fs::directory_iterator(out)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temp left: " << e.path();
  }
  // junit.xml carries the command too, and both it and the CSV carry repro paths and reasons:
  // U+FFFD there as well, never the raw byte (one makes an XML reader refuse the whole junit.xml).
  for (const char* name : {"junit.xml", "results.csv"}) {
    std::ifstream in(out / name, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (std::string(name) == "junit.xml") {
      EXPECT_NE(text.find("rd\xEF\xBF\xBD"), std::string::npos) << name;
    }
    EXPECT_EQ(text.find('\xff'), std::string::npos) << name << " holds the raw byte";
  }
  const Outcome merged = shell(in_dir + "report merge --out m \"$(printf 'r\\377')\"");
  ASSERT_EQ(merged.exit, 0) << merged.output;
  EXPECT_EQ(read_json(dir_ / "m" / "report.json")["run"]["merged_from"][0], "r\xEF\xBF\xBD");
}

// `moeval --help` gives the exit-code scheme of docs/errors.md, merge's exit 3 included.
TEST_F(CheckCli, HelpGivesTheExitCodes) {
  const Outcome r = run("--help");
  EXPECT_EQ(r.exit, 0) << r.output;
  EXPECT_NE(r.output.find("3 nothing could run, or not everything required (no usable GPU; a merge of shards that "
                          "did not all finish)"),
            std::string::npos)
      << r.output;
}

// The golden directory is read before any work only when the run uses it (docs/errors.md): a
// missing default corpus does not stop a run without golden jobs.
TEST_F(CheckCli, TheGoldenDirectoryIsReadOnlyWhenUsed) {
  const std::string none = "MOEVAL_GOLDEN_DIR=" + (dir_ / "none").string();
  EXPECT_EQ(run(kQuickGpuJobs, none).exit, 0);
  const Outcome golden = run("check --cpu-only --matrix quick --filter 'id=golden layer.h5'", none);
  EXPECT_EQ(golden.exit, 2) << golden.output;
  EXPECT_NE(golden.output.find("golden directory '" + (dir_ / "none").string() + "' does not exist"), std::string::npos)
      << golden.output;
}

bool is_golden_update_header(const std::string& line) { return line.rfind("moeval golden --update: ", 0) == 0; }

// Ctrl-C during `golden --update`: the family in flight finishes, and the files already rewritten
// are named before the process ends by SIGINT (it used to end silently with 130).
TEST_F(CheckCli, AnInterruptedGoldenUpdateNamesTheFilesItRewrote) {
  const fs::path corpus = dir_ / "corpus";
  fs::create_directories(corpus);
  for (const char* name : {"wna16.h5", "marlin.h5", "layouts.h5", "layer.h5"}) {
    fs::copy_file(fs::path(MOEVAL_GOLDEN_DATA) / name, corpus / name);
  }
  // wna16.h5 holds the layer family's cases: the update rewrites it first.
  fs::copy_file(fs::path(MOEVAL_GOLDEN_DATA) / "layer.h5", corpus / "wna16.h5", fs::copy_options::overwrite_existing);
  // Signalled once the update has begun (wna16.h5 in flight).
  const test_support::SignalledRun r = test_support::run_and_signal(
      MOEVAL_BINARY, {"golden", "--update", "--dir", corpus.string()}, 1, SIGINT, is_golden_update_header);
  ASSERT_TRUE(r.started);
  ASSERT_TRUE(WIFSIGNALED(r.status)) << r.output;
  EXPECT_EQ(WTERMSIG(r.status), SIGINT);
  EXPECT_NE(r.output.find("  wna16.h5: rewritten"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("golden --update: interrupted after "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" of 4 files; rewritten: wna16.h5"), std::string::npos) << r.output;
  for (const auto& e : fs::directory_iterator(corpus)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temp left: " << e.path();
  }
}

TEST_F(CheckCli, ShowPrintsAGoldenFilesCasesAndRefusesAnUnknownCase) {
  const std::string file = std::string(MOEVAL_GOLDEN_DATA) + "/layer.h5";
  const Outcome all = run("show " + file);
  EXPECT_EQ(all.exit, 0) << all.output;
  EXPECT_NE(all.output.find("golden file (family 'layer'), schema 1"), std::string::npos) << all.output;
  const std::size_t lines = std::count(all.output.begin(), all.output.end(), '\n');
  EXPECT_NE(all.output.find("\ncase layer-"), std::string::npos);
  EXPECT_NE(all.output.find("  problem: layer, E "), std::string::npos);
  EXPECT_NE(all.output.find("expected/gemm1/y16"), std::string::npos);
  const Outcome bad = run("show " + file + " --case nope");
  EXPECT_EQ(bad.exit, 2);
  EXPECT_NE(bad.output.find("moeval show: error: --case: 'nope' is not a case of " + file), std::string::npos) << bad.output;
  EXPECT_EQ(bad.output.find("schema 1"), std::string::npos) << "the error comes before anything else";
  const Outcome corrupt = run("show /etc/passwd");
  EXPECT_EQ(corrupt.exit, 2);
  EXPECT_NE(corrupt.output.find("is not an HDF5 file"), std::string::npos) << corrupt.output;
  EXPECT_GT(lines, 20u) << "every case and its datasets";
}

// `moeval check --cpu-only --filter kind=golden --out OUT`, sent `signal_number` once its first
// result line was printed (one golden family done, three to go).
test_support::SignalledRun golden_run_signalled(const fs::path& out, int signal_number) {
  return test_support::run_and_signal(MOEVAL_BINARY, {"check", "--cpu-only", "--filter", "kind=golden", "--out", out.string()},
                                      1, signal_number);
}

TEST_F(CheckCli, AKilledRunKeepsItsLinesAndMergeReadsThem) {
  const fs::path out = dir_ / "report";
  const test_support::SignalledRun r = golden_run_signalled(out, SIGKILL);
  ASSERT_TRUE(r.started);
  ASSERT_EQ(r.results, 1) << r.output;
  const std::string& text = r.output;
  ASSERT_TRUE(WIFSIGNALED(r.status)) << text;
  EXPECT_FALSE(fs::exists(out / "report.json")) << "written at the end only";
  const Outcome merged = run("report merge --out " + (dir_ / "merged").string() + " " + out.string());
  // Exit 0 would say everything required ran; the killed shard's checks did not (docs/errors.md).
  ASSERT_EQ(merged.exit, 3) << merged.output;
  EXPECT_NE(merged.output.find("(a shard did not finish)"), std::string::npos) << merged.output;
  EXPECT_NE(merged.output.find("of the selection did not run (a shard was interrupted or did not finish)"), std::string::npos)
      << merged.output;
  const nlohmann::json report = read_json(dir_ / "merged" / "report.json");
  EXPECT_EQ(report["complete"], false);
  EXPECT_GE(report["checks"].size(), 1u) << "the check printed before the kill is in results.jsonl";
  EXPECT_EQ(report["checks"].size() + report["summary"]["not_run"].get<std::size_t>(), 4u);
}

// A report nested as deep as its writer liked (here 200000 levels, in a field merge ignores) is
// refused while parsing: copying or diffing it later would recurse once a level and overflow the
// stack (it ended the merge by SIGSEGV). The same holds for report.json and bench --compare files.
TEST_F(CheckCli, ADeeplyNestedReportIsRefusedNotACrash) {
  const fs::path shard = dir_ / "deep";
  fs::create_directories(shard);
  std::ofstream(shard / "results.jsonl") << "{\"type\":\"header\",\"x\":" << std::string(200000, '[')
                                         << std::string(200000, ']') << "}\n";
  const Outcome merged = run("report merge --out " + (dir_ / "merged").string() + " " + shard.string());
  EXPECT_EQ(merged.exit, 2) << merged.output;
  EXPECT_NE(merged.output.find("line 1: nests deeper than 64 levels"), std::string::npos) << merged.output;
  std::ofstream(dir_ / "deep.json") << std::string(100, '[') << std::string(100, ']');
  const Outcome bench = run("bench --compare " + (dir_ / "deep.json").string() + " " + (dir_ / "deep.json").string());
  EXPECT_EQ(bench.exit, 2) << bench.output;
  EXPECT_NE(bench.output.find("nests deeper than 64 levels"), std::string::npos) << bench.output;
}

// A shard with every check but no end line died after its last check (at teardown, or killed):
// its run cannot be told complete, so the merge is not a pass (exit 3), though nothing is missing.
TEST_F(CheckCli, MergeOfAShardWithoutItsEndLineIsNotAPass) {
  const fs::path out = dir_ / "report";
  ASSERT_EQ(run(kQuickGpuJobs + " --out " + out.string()).exit, 0);
  fs::remove(out / "report.json");
  std::ifstream in(out / "results.jsonl");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  in.close();
  ASSERT_GE(lines.size(), 3u);
  ASSERT_NE(lines.back().find("\"end\""), std::string::npos) << lines.back();
  lines.pop_back();
  std::ofstream rewritten(out / "results.jsonl", std::ios::trunc);
  for (const std::string& line : lines) rewritten << line << "\n";
  rewritten.close();
  const Outcome merged = run("report merge --out " + (dir_ / "merged").string() + " " + out.string());
  EXPECT_EQ(merged.exit, 3) << merged.output;
  EXPECT_NE(merged.output.find("a shard did not finish (its results.jsonl has no end line)"), std::string::npos) << merged.output;
  EXPECT_EQ(read_json(dir_ / "merged" / "report.json")["summary"]["not_run"], 0);
}

// A new run in a report directory removes what the previous run derived before it writes a line:
// a run killed half-way used to sit beside the previous run's junit.xml and results.csv.
TEST_F(CheckCli, AKilledRunLeavesNoFileOfThePreviousRun) {
  const fs::path out = dir_ / "report";
  ASSERT_EQ(run(kQuickGpuJobs + " --out " + out.string()).exit, 0);
  ASSERT_TRUE(fs::exists(out / "junit.xml"));
  const test_support::SignalledRun r = golden_run_signalled(out, SIGKILL);
  ASSERT_TRUE(r.started);
  ASSERT_TRUE(WIFSIGNALED(r.status)) << r.output;
  for (const char* name : {"report.json", "results.csv", "junit.xml"}) {
    EXPECT_FALSE(fs::exists(out / name)) << name << " of the previous run survived";
  }
  std::ifstream lines(out / "results.jsonl");
  std::string header;
  std::getline(lines, header);
  EXPECT_NE(header.find("kind=golden"), std::string::npos) << "results.jsonl is the killed run's: " << header;
}

TEST_F(CheckCli, CtrlCWritesThePartialReport) {
  const fs::path out = dir_ / "report";
  const test_support::SignalledRun r = golden_run_signalled(out, SIGINT);
  ASSERT_TRUE(r.started);
  ASSERT_EQ(r.results, 1) << r.output;
  const std::string& text = r.output;
  const int status = r.status;
  ASSERT_TRUE(WIFSIGNALED(status)) << "ends by SIGINT as a shell expects; output:\n" << text;
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_NE(text.find("check: interrupted after"), std::string::npos) << text;
  const nlohmann::json report = read_json(out / "report.json");
  EXPECT_EQ(report["complete"], true);
  EXPECT_EQ(report["interrupted"], true);
  EXPECT_GE(report["checks"].size(), 1u);
  EXPECT_GT(report["summary"]["not_run"].get<int>(), 0) << report["summary"];
  EXPECT_TRUE(fs::exists(out / "junit.xml"));
  for (const auto& e : fs::directory_iterator(out)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temp left: " << e.path();
  }
}

// `moeval sweep` takes check's selection options: --list prints every GEMM case as a job on every
// device and needs no GPU; --filter kind=gemm1 reaches them; a run without a GPU is exit 3 and
// writes no report.
TEST_F(CheckCli, SweepSelectsLikeCheck) {
  const Outcome list = run("sweep --matrix quick --list --filter kind=gemm1");
  ASSERT_EQ(list.exit, 0) << list.output;
  EXPECT_NE(list.output.find("on every device"), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find("golden"), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find("gemm2-"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("of the quick matrix; nothing was run"), std::string::npos) << list.output;
  const Outcome seeds = run("sweep --matrix quick --list");
  const Outcome one_seed = run("sweep --matrix quick --list --seeds 1");
  EXPECT_GT(count_lines(seeds.output), count_lines(one_seed.output)) << "two seeds by default";
  const Outcome shard = run("sweep --matrix quick --list --shard 1/2");
  EXPECT_EQ(shard.exit, 0) << shard.output;
  EXPECT_LT(count_lines(shard.output), count_lines(seeds.output));
}

// Without a GPU the sweep runs nothing and says so (exit 3). On a machine with one the sweep would
// run: Skipped there, not passed, since this half is then unchecked.
TEST_F(CheckCli, SweepWithoutAGpuRunsNothing) {
  if (::system("nvidia-smi -L > /dev/null 2>&1") == 0) GTEST_SKIP() << "a GPU is visible: the sweep would run";
  const Outcome none = run("sweep --matrix quick --out " + (dir_ / "sweep").string());
  EXPECT_EQ(none.exit, 3) << none.output;
  EXPECT_NE(none.output.find("nothing was swept"), std::string::npos) << none.output;
  EXPECT_FALSE(fs::exists(dir_ / "sweep")) << "the report directory is created only for a run";
}

}  // namespace
