// The report of `check --out`: the JSON schema of report.json and results.jsonl, the streamed
// lines a killed run leaves, the CSV and JUnit writers, and `report merge` (the shards of a
// selection merge into what a single run writes, whatever order the checks finished in).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "exit_codes.h"
#include "job_runner.h"
#include "matrices.h"
#include "report_comparison.h"
#include "report_dir.h"
#include "report_formats.h"
#include "report_merge.h"
#include "run_header.h"
#include "shard.h"

namespace moeval::cli {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<Job> quick_jobs() {
  MatrixOptions o;
  o.name = MatrixName::quick;
  o.kernels = {"wna16_moe", "marlin_moe"};
  return build_jobs(o);
}

// A record as a run would write it, with figures that depend only on the job: even jobs pass,
// every fifth fails with a reason that needs quoting and escaping, the rest are skipped.
nlohmann::json record_for(const Job& job) {
  nlohmann::json r = skipped_record(job, "no CUDA device");
  if (job.index % 5 == 3) {
    r["status"] = "FAIL";
    r["reason"] = "ratio 3.5, \"worst\" <row 1> & col 2\nsecond line\x01";
    r["max_ratio"] = 3.5;
    r["worst"] = {{"row", 1}, {"col", 2}, {"value", 1.0}, {"reference", 0.5}, {"bound", 0.1}, {"ratio", 3.5}};
    r["mismatches"] = 7;
    r["elements"] = 100;
    r["mismatch_fraction"] = 0.07;
  } else if (job.index % 2 == 0) {
    r["status"] = "PASS";
    r["reason"] = "";
    r["max_ratio"] = 0.5;
    r["mismatches"] = 0;
  }
  r["device"] = job.kind == JobKind::golden ? nlohmann::json(nullptr) : nlohmann::json(0);
  r["time_s"] = 0.25;
  return r;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("moeval-report-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static nlohmann::json header(const std::vector<Job>& all, const std::vector<Job>& mine, Shard shard) {
    RunDescription d;
    d.command = "moeval check --matrix quick";
    d.matrix = "quick";
    d.seeds = 1;
    d.shard = shard;
    d.jobs_selected = all.size();
    d.jobs_in_shard = mine.size();
    return make_header(d);
  }
  // Writes a run of `mine` (in reverse order: workers finish out of order) into `dir`.
  static RunReport write_run(const fs::path& dir, const std::vector<Job>& all, const std::vector<Job>& mine, Shard shard) {
    ReportDir out(dir, header(all, mine, shard));
    for (auto it = mine.rbegin(); it != mine.rend(); ++it) out.add(record_for(*it));
    out.finish({{"end_time", utc_now()}, {"duration_s", 1.5}, {"interrupted", false}});
    return out.report();
  }
  fs::path dir_;
};

TEST_F(ReportTest, LinesAreStreamedBeforeTheRunEnds) {
  const auto jobs = quick_jobs();
  ReportDir out(dir_, header(jobs, jobs, Shard{}));
  out.add(record_for(jobs[0]));
  out.add(record_for(jobs[1]));
  EXPECT_FALSE(fs::exists(dir_ / "report.json")) << "written at the end only";
  std::istringstream lines(read(dir_ / "results.jsonl"));
  std::string line;
  std::vector<nlohmann::json> parsed;
  while (std::getline(lines, line)) parsed.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[0]["type"], "header");
  EXPECT_EQ(parsed[1]["type"], "check");
  EXPECT_EQ(parsed[2]["id"], jobs[1].id());
  // A killed run: load_run reads the lines (a torn last line is dropped) and calls it incomplete.
  std::ofstream(dir_ / "results.jsonl", std::ios::app) << "{\"type\": \"check\", \"ind";
  const RunReport partial = load_run(dir_);
  EXPECT_FALSE(partial.complete());
  EXPECT_EQ(partial.checks.size(), 2u);
  EXPECT_EQ(partial.summary()["not_run"], jobs.size() - 2);
}

TEST_F(ReportTest, ReportJsonFollowsTheSchema) {
  const auto jobs = quick_jobs();
  write_run(dir_, jobs, jobs, Shard{});
  const nlohmann::json j = nlohmann::json::parse(read(dir_ / "report.json"));
  EXPECT_EQ(j["schema_version"], kReportSchemaVersion);
  EXPECT_TRUE(j["moeval"]["version"].is_string());
  EXPECT_TRUE(j["moeval"]["commit"].is_string());
  const nlohmann::json& run = j["run"];
  for (const char* key : {"command", "start_time", "end_time", "host", "cuda_runtime_version", "matrix", "contract"}) {
    EXPECT_TRUE(run[key].is_string()) << key;
  }
  EXPECT_TRUE(run["devices"].is_array());
  EXPECT_TRUE(run["driver_version"].is_string() || run["driver_version"].is_null());
  EXPECT_TRUE(run["duration_s"].is_number());
  EXPECT_TRUE(run["filters"].is_array());
  EXPECT_EQ(run["shard"]["count"], 1);
  EXPECT_EQ(run["jobs_selected"], jobs.size());
  EXPECT_EQ(j["complete"], true);
  EXPECT_EQ(j["interrupted"], false);
  ASSERT_EQ(j["checks"].size(), jobs.size());
  long failed = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const nlohmann::json& c = j["checks"][i];
    EXPECT_EQ(c["index"], i) << "ordered by index";
    for (const char* key : {"id", "kernel", "kind", "shape", "case", "tier", "reference", "contract", "status", "reason"}) {
      EXPECT_TRUE(c[key].is_string()) << key;
    }
    EXPECT_TRUE(c["params"].is_object());
    EXPECT_EQ(c["reference"], jobs[i].kind == JobKind::golden ? "golden file" : "cpu-fp64")
        << "schema 2: what judged the check (the quick matrix is all CPU-sized)";
    EXPECT_TRUE(c["time_s"].is_number());
    for (const char* key : {"device", "max_ratio", "worst", "mismatches", "mismatch_fraction", "repro", "pattern"}) {
      EXPECT_TRUE(c.contains(key)) << key;
    }
    if (jobs[i].kind != JobKind::golden) {
      for (const char* p : {"E", "M", "topk", "H", "I", "group", "k_shards"}) EXPECT_TRUE(c["params"][p].is_number_integer()) << p;
      for (const char* p : {"weight_type", "dtype", "routing", "tier"}) EXPECT_TRUE(c["params"][p].is_string()) << p;
    }
    failed += c["status"] == "FAIL";
  }
  EXPECT_EQ(j["summary"]["failed"], failed);
  EXPECT_EQ(j["summary"]["passed"].get<long>() + j["summary"]["failed"].get<long>() + j["summary"]["skipped"].get<long>(),
            long(jobs.size()));
}

TEST_F(ReportTest, CsvHasOneQuotedRowPerCheck) {
  const auto jobs = quick_jobs();
  const RunReport r = write_run(dir_, jobs, jobs, Shard{});
  const std::string csv = read(dir_ / "results.csv");
  EXPECT_EQ(csv, to_csv(r));
  EXPECT_EQ(csv.rfind("index,id,kernel,kind,shape,case,weight_type,", 0), 0u);
  // Quoted fields may hold line breaks: count the records by their CRLF ends outside quotes.
  std::size_t records = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < csv.size(); ++i) {
    if (csv[i] == '"') quoted = !quoted;
    if (!quoted && csv.compare(i, 2, "\r\n") == 0) ++records;
  }
  EXPECT_FALSE(quoted);
  EXPECT_EQ(records, jobs.size() + 1);
  EXPECT_NE(csv.find("\"ratio 3.5, \"\"worst\"\" <row 1> & col 2\nsecond line\x01\""), std::string::npos);
}

TEST_F(ReportTest, JunitCountsAndEscapes) {
  const auto jobs = quick_jobs();
  const RunReport r = write_run(dir_, jobs, jobs, Shard{});
  const std::string xml = read(dir_ / "junit.xml");
  const nlohmann::json s = r.summary();
  EXPECT_NE(xml.find("<testsuites name=\"moeval\" tests=\"" + std::to_string(jobs.size()) + "\" failures=\"" +
                     s["failed"].dump() + "\" errors=\"0\" skipped=\"" + s["skipped"].dump() + "\""),
            std::string::npos)
      << xml.substr(0, 300);
  std::size_t cases = 0, failures = 0;
  for (std::size_t p = xml.find("<testcase "); p != std::string::npos; p = xml.find("<testcase ", p + 1)) ++cases;
  for (std::size_t p = xml.find("<failure "); p != std::string::npos; p = xml.find("<failure ", p + 1)) ++failures;
  EXPECT_EQ(cases, jobs.size());
  EXPECT_EQ(long(failures), s["failed"].get<long>());
  std::size_t references = 0;
  for (std::size_t p = xml.find("<property name=\"reference\" value=\""); p != std::string::npos;
       p = xml.find("<property name=\"reference\" value=\"", p + 1)) {
    ++references;
  }
  EXPECT_EQ(references, jobs.size()) << "every testcase names the reference that judged it";
  EXPECT_NE(xml.find("<property name=\"reference\" value=\"cpu-fp64\"/>"), std::string::npos);
  EXPECT_NE(xml.find("&quot;worst&quot; &lt;row 1&gt; &amp; col 2\nsecond line?"), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
}

using testing::without_timing;

class MergeEqualsOneRun : public ReportTest, public ::testing::WithParamInterface<int> {};

TEST_P(MergeEqualsOneRun, ForShardsOfTheQuickMatrix) {
  const int n = GetParam();
  const auto jobs = quick_jobs();
  const RunReport single = write_run(dir_ / "single", jobs, jobs, Shard{});
  std::vector<RunReport> shards;
  std::vector<fs::path> dirs;
  for (int i = n - 1; i >= 0; --i) {  // given in any order
    const std::vector<Job> mine = shard_jobs(jobs, Shard{i, n, "--shard"});
    dirs.push_back(dir_ / ("shard-" + std::to_string(i)));
    shards.push_back(write_run(dirs.back(), jobs, mine, Shard{i, n, "--shard"}));
  }
  // Through the files, as `moeval report merge` reads them.
  std::vector<RunReport> loaded;
  for (const auto& d : dirs) loaded.push_back(load_run(d));
  const RunReport merged = merge_runs(loaded, dirs);
  EXPECT_EQ(without_timing(to_report_json(merged)), without_timing(to_report_json(load_run(dir_ / "single"))));
  EXPECT_EQ(to_csv(merged).size(), to_csv(single).size());
}

INSTANTIATE_TEST_SUITE_P(Shards, MergeEqualsOneRun, ::testing::Values(1, 2, 3, 5),
                         [](const auto& param_info) { return "Shards" + std::to_string(param_info.param); });

TEST_F(ReportTest, MergeRefusesWhatIsNotOneSelection) {
  const auto jobs = quick_jobs();
  auto half = [&](int i) { return shard_jobs(jobs, Shard{i, 2, "--shard"}); };
  write_run(dir_ / "a", jobs, half(0), Shard{0, 2, "--shard"});
  write_run(dir_ / "b", jobs, half(1), Shard{1, 2, "--shard"});
  const auto expect_error = [&](const std::vector<fs::path>& dirs, const std::string& message) {
    std::vector<RunReport> runs;
    for (const auto& d : dirs) runs.push_back(load_run(d));
    try {
      merge_runs(runs, dirs);
      FAIL() << "merged";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_error({dir_ / "a"}, "shard 1/2 is missing");
  expect_error({dir_ / "a", dir_ / "a"}, "shard 0/2 is given twice");
  RunDescription other;
  other.matrix = "standard";
  other.shard = Shard{1, 2, "--shard"};
  other.jobs_selected = jobs.size();
  { ReportDir c(dir_ / "c", make_header(other)); }
  expect_error({dir_ / "a", dir_ / "c"}, "are not shards of one selection: matrix is \"standard\" there and \"quick\" here");
}

TEST_F(ReportTest, ADirectoryOfShardDirectoriesStandsForItsShards) {
  const auto jobs = quick_jobs();
  write_run(dir_ / "shard-1-of-2", jobs, {}, Shard{1, 2, "--shard"});
  write_run(dir_ / "shard-0-of-2", jobs, jobs, Shard{0, 2, "--shard"});
  const auto dirs = expand_report_dirs({dir_});
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(dirs[0].filename(), "shard-0-of-2");
  EXPECT_THROW(expand_report_dirs({dir_ / "none"}), UsageError);
}

}  // namespace
}  // namespace moeval::cli
