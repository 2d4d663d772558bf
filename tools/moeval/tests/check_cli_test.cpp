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

// `env` is prepended to the command ("VAR=value ..."), the way a launcher sets it.
Outcome run(const std::string& args, const std::string& env = "") {
  Outcome r;
  FILE* pipe = ::popen((env + " " + std::string(MOEVAL_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  const int status = ::pclose(pipe);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
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
  ASSERT_EQ(merged.exit, 0) << merged.output;
  EXPECT_NE(merged.output.find("(a shard did not finish)"), std::string::npos) << merged.output;
  const nlohmann::json report = read_json(dir_ / "merged" / "report.json");
  EXPECT_EQ(report["complete"], false);
  EXPECT_GE(report["checks"].size(), 1u) << "the check printed before the kill is in results.jsonl";
  EXPECT_EQ(report["checks"].size() + report["summary"]["not_run"].get<std::size_t>(), 4u);
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
TEST_F(CheckCli, SweepSelectsLikeCheckAndNeedsAGpuToRun) {
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
  // With a GPU visible the sweep would run: the no-GPU exit is this machine's only.
  if (::system("nvidia-smi -L > /dev/null 2>&1") == 0) return;
  const Outcome none = run("sweep --matrix quick --out " + (dir_ / "sweep").string());
  EXPECT_EQ(none.exit, 3) << none.output;
  EXPECT_NE(none.output.find("nothing was swept"), std::string::npos) << none.output;
  EXPECT_FALSE(fs::exists(dir_ / "sweep" / "report.json"));
}

}  // namespace
