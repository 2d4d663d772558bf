// The report of `check --out`: the JSON schema of report.json and results.jsonl, the streamed
// lines a killed run leaves, the CSV and JUnit writers, and `report merge` (the shards of a
// selection merge into what a single run writes, whatever order the checks finished in).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
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

// --out is judged before the device check without creating anything: a sweep without a GPU ended
// with exit 3 for an --out that is a file, where every other machine says exit 2.
TEST_F(ReportTest, CheckWritableRefusesWhatCreateWouldAndCreatesNothing) {
  const auto message_of = [](const fs::path& dir) -> std::string {
    try {
      ReportDir::check_writable(dir);
      return "";
    } catch (const UsageError& e) {
      return e.what();
    }
  };
  fs::create_directories(dir_);
  const fs::path file = dir_ / "file";
  std::ofstream(file) << "x";
  EXPECT_EQ(message_of(file), "cannot write the report directory '" + file.string() + "': Not a directory");
  EXPECT_EQ(message_of(file / "below" / "deeper"),
            "cannot write the report directory '" + (file / "below" / "deeper").string() + "': Not a directory");
  EXPECT_EQ(message_of(dir_ / "new" / "deeper"), "");
  EXPECT_FALSE(fs::exists(dir_ / "new"));  // judged, not created
  EXPECT_EQ(message_of(dir_), "");
  // Relative paths walk up to the working directory ("file/below" stopped at "file" before).
  const fs::path previous = fs::current_path();
  fs::current_path(dir_);
  EXPECT_EQ(message_of("file/below"), "cannot write the report directory 'file/below': Not a directory");
  EXPECT_EQ(message_of("fresh"), "");
  EXPECT_EQ(message_of("fresh/a/b"), "");
  fs::create_symlink(dir_ / "nowhere", dir_ / "dangling");
  EXPECT_EQ(message_of("dangling"), "cannot write the report directory 'dangling': File exists");
  fs::current_path(previous);
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directories(dir_ / "locked");
    fs::permissions(dir_ / "locked", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_EQ(message_of(dir_ / "locked" / "run"),
              "cannot write the report directory '" + (dir_ / "locked" / "run").string() + "': Permission denied");
    fs::current_path(dir_ / "locked");
    EXPECT_EQ(message_of("run"), "cannot write the report directory 'run': Permission denied");
    fs::current_path(previous);
    fs::permissions(dir_ / "locked", fs::perms::owner_all);
  }
}

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

// A run directory that holds a report and, beside it, shard directories holds two runs (a single
// run and a later sharded one with the same --out, or the reverse): merging either silently could
// merge the stale one.
TEST_F(ReportTest, ADirectoryWithAReportAndShardDirectoriesIsRefused) {
  const auto jobs = quick_jobs();
  write_run(dir_, jobs, jobs, Shard{});
  write_run(dir_ / "shard-0-of-2", jobs, shard_jobs(jobs, Shard{0, 2, "--shard"}), Shard{0, 2, "--shard"});
  write_run(dir_ / "shard-1-of-2", jobs, shard_jobs(jobs, Shard{1, 2, "--shard"}), Shard{1, 2, "--shard"});
  try {
    expand_report_dirs({dir_});
    FAIL() << "the stale report or the shards were taken silently";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "report directory '" + dir_.string() +
                                         "': holds both a report (report.json) and shard directories (shard-0-of-2, ...) "
                                         "from different runs; give the shard directories or move one of them away");
  }
  EXPECT_EQ(expand_report_dirs({dir_ / "shard-0-of-2", dir_ / "shard-1-of-2"}).size(), 2u) << "named one by one they merge";
}

// report.json as a test (or a user) edits it.
void edit_json(const fs::path& file, const std::function<void(nlohmann::json&)>& change) {
  nlohmann::json j = nlohmann::json::parse(read(file));
  change(j);
  std::ofstream(file, std::ios::trunc) << j.dump(2);
}

// The header of a run as another build would have written it: in report.json and on line 1 of
// results.jsonl alike (the two files of one run agree).
void edit_header(const fs::path& dir, const std::function<void(nlohmann::json&)>& change) {
  edit_json(dir / "report.json", change);
  const std::string text = read(dir / "results.jsonl");
  nlohmann::json header = nlohmann::json::parse(text.substr(0, text.find('\n')));
  change(header);
  std::ofstream(dir / "results.jsonl", std::ios::trunc) << header.dump() << text.substr(text.find('\n'));
}

std::string merge_error(const std::vector<fs::path>& dirs) {
  try {
    std::vector<RunReport> runs;
    for (const auto& d : dirs) runs.push_back(load_run(d));
    merge_runs(runs, dirs);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(merged)";
}

// Shards of two builds may judge differently; the merged report used to name shard 0's commit only.
TEST_F(ReportTest, MergeRefusesShardsOfTwoBuilds) {
  const auto jobs = quick_jobs();
  write_run(dir_ / "a", jobs, shard_jobs(jobs, Shard{0, 2, "--shard"}), Shard{0, 2, "--shard"});
  write_run(dir_ / "b", jobs, shard_jobs(jobs, Shard{1, 2, "--shard"}), Shard{1, 2, "--shard"});
  const std::string ours = nlohmann::json::parse(read(dir_ / "a" / "report.json"))["moeval"]["commit"];
  edit_header(dir_ / "b", [](nlohmann::json& j) { j["moeval"]["commit"] = "0123456789ab"; });
  const std::string error = merge_error({dir_ / "a", dir_ / "b"});
  EXPECT_NE(error.find("'" + (dir_ / "b").string() + "' was written by moeval "), std::string::npos) << error;
  EXPECT_NE(error.find("(commit 0123456789ab) but '" + (dir_ / "a").string() + "' by moeval "), std::string::npos) << error;
  EXPECT_NE(error.find("(commit " + ours + "); merge the shards of one build"), std::string::npos) << error;
  edit_header(dir_ / "b", [&](nlohmann::json& j) {
    j["moeval"]["commit"] = ours;
    j["moeval"]["version"] = "9.9.9";
  });
  EXPECT_NE(merge_error({dir_ / "a", dir_ / "b"}).find("was written by moeval 9.9.9"), std::string::npos);
}

struct Malformed {
  const char* name;
  std::function<void(nlohmann::json&)> change;  // applied to report.json
  std::string message;                          // after "report '<file>': "
};

class MalformedReport : public ReportTest, public ::testing::WithParamInterface<Malformed> {};

// Every field merge reads is checked when the report is loaded: the message names the file, the
// field and what is allowed (a report without run.shard was read out of bounds; the others gave
// nlohmann's text without the file, or were taken: a shard count of 0, seeds "x").
TEST_P(MalformedReport, IsRefusedNamingTheFileAndTheField) {
  const auto jobs = quick_jobs();
  write_run(dir_, jobs, jobs, Shard{});
  edit_json(dir_ / "report.json", GetParam().change);
  EXPECT_EQ(merge_error({dir_}), "report '" + (dir_ / "report.json").string() + "': " + GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, MalformedReport,
    ::testing::Values(
        Malformed{"NoShard", [](nlohmann::json& j) { j["run"].erase("shard"); }, "run.shard is missing; allowed: an object"},
        Malformed{"NoRun", [](nlohmann::json& j) { j.erase("run"); }, "run is missing; allowed: an object"},
        Malformed{"NoChecks", [](nlohmann::json& j) { j.erase("checks"); },
                  "checks is missing; allowed: an array of check records"},
        Malformed{"ChecksNotAnArray", [](nlohmann::json& j) { j["checks"] = {{"index", 0}}; },
                  "checks is {\"index\":0}; allowed: an array of check records"},
        Malformed{"NullCheck", [](nlohmann::json& j) { j["checks"][3] = nullptr; },
                  "checks[3] is null; allowed: an object with index, id and status"},
        Malformed{"IndexAString", [](nlohmann::json& j) { j["checks"][1]["index"] = "1"; },
                  "checks[1].index is \"1\"; allowed: an integer in 0..29"},
        Malformed{"IndexOutside", [](nlohmann::json& j) { j["checks"][1]["index"] = 30; },
                  "checks[1].index is 30; allowed: an integer in 0..29"},
        Malformed{"UnknownStatus", [](nlohmann::json& j) { j["checks"][0]["status"] = "OK"; },
                  "checks[0].status is \"OK\"; allowed: PASS, FAIL or SKIPPED"},
        Malformed{"EndTimeANumber", [](nlohmann::json& j) { j["run"]["end_time"] = 5; }, "run.end_time is 5; allowed: a string"},
        Malformed{"ShardCountZero", [](nlohmann::json& j) { j["run"]["shard"]["count"] = 0; },
                  "run.shard.count is 0; allowed: an integer in 1..100000"},
        Malformed{"ShardIndexPastCount", [](nlohmann::json& j) { j["run"]["shard"]["index"] = 1; },
                  "run.shard.index is 1; allowed: an integer in 0..0"},
        Malformed{"SeedsText", [](nlohmann::json& j) { j["run"]["seeds"] = "x"; },
                  "run.seeds is \"x\"; allowed: an integer in 1..1000"},
        Malformed{"JobsInShardPastSelected", [](nlohmann::json& j) { j["run"]["jobs_in_shard"] = 31; },
                  "run.jobs_in_shard is 31; allowed: an integer in 0..30"},
        Malformed{"NoCommit", [](nlohmann::json& j) { j["moeval"].erase("commit"); },
                  "moeval.commit is missing; allowed: a string"},
        Malformed{"CompleteText", [](nlohmann::json& j) { j["complete"] = "yes"; },
                  "complete is \"yes\"; allowed: true or false"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST_F(ReportTest, AMalformedLineOfResultsJsonlIsRefusedNamingTheLine) {
  const auto jobs = quick_jobs();
  write_run(dir_, jobs, jobs, Shard{});
  fs::remove(dir_ / "report.json");  // a killed run: merge reads the lines
  std::string text = read(dir_ / "results.jsonl");
  nlohmann::json header = nlohmann::json::parse(text.substr(0, text.find('\n')));
  header["run"].erase("shard");
  std::ofstream(dir_ / "results.jsonl", std::ios::trunc) << header.dump() << text.substr(text.find('\n'));
  EXPECT_EQ(merge_error({dir_}),
            "report '" + (dir_ / "results.jsonl").string() + "', line 1: run.shard is missing; allowed: an object");
  // A check line repeated in one file is not "in two shards".
  write_run(dir_, jobs, jobs, Shard{});
  fs::remove(dir_ / "report.json");
  text = read(dir_ / "results.jsonl");
  const std::size_t second = text.find('\n') + 1;
  const std::string first_check = text.substr(second, text.find('\n', second) + 1 - second);
  std::ofstream(dir_ / "results.jsonl", std::ios::app) << first_check;
  const std::string id = nlohmann::json::parse(first_check)["id"];
  const std::string index = nlohmann::json::parse(first_check)["index"].dump();
  EXPECT_EQ(merge_error({dir_}), "report merge: '" + dir_.string() + "' holds check " + index + " (" + id + ") twice");
}

// A report file that cannot be read says why (it was "is not valid JSON", "is empty", or
// basic_filebuf's text for a directory).
TEST_F(ReportTest, AnUnreadableReportGivesTheSystemsReason) {
  fs::create_directories(dir_ / "report.json");
  EXPECT_EQ(merge_error({dir_}), "report '" + (dir_ / "report.json").string() + "': cannot be read: Is a directory");
  fs::remove(dir_ / "report.json");
  fs::create_directories(dir_ / "results.jsonl");
  EXPECT_EQ(merge_error({dir_}), "report '" + (dir_ / "results.jsonl").string() + "': cannot be read: Is a directory");
}

bool has_temp_file(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) return true;
  }
  return false;
}

// A new run in a report directory leaves nothing of the previous one beside its results.jsonl: a
// CI that collects junit.xml after a killed run would report the previous run's results.
TEST_F(ReportTest, ANewRunRemovesEveryFileOfThePreviousRun) {
  const auto jobs = quick_jobs();
  write_run(dir_, jobs, jobs, Shard{});
  std::ofstream(dir_ / "report.html") << "<html>the previous run</html>";
  ReportDir started(dir_, header(jobs, jobs, Shard{}));
  for (const char* name : {"report.json", "results.csv", "junit.xml", "report.html"}) {
    EXPECT_FALSE(fs::exists(dir_ / name)) << name << " of the previous run survived the start of a new one";
  }
  const std::string lines = read(dir_ / "results.jsonl");
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 1) << "the new run's header only";
  EXPECT_FALSE(has_temp_file(dir_));
}

// The descriptors this process has open.
std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// A start that fails deletes nothing: the previous report stays whole, and no temp file or
// descriptor is left. Here one of the report's files is a directory (results.jsonl cannot be
// replaced, junit.xml cannot be removed). The start used to remove report.json first; then it
// replaced results.jsonl before removing junit.xml, losing the previous run's lines and leaking
// the new file's descriptor.
TEST_F(ReportTest, AFailedStartDeletesNothing) {
  const auto jobs = quick_jobs();
  for (const char* in_the_way : {"results.jsonl", "junit.xml", "report.html"}) {
    SCOPED_TRACE(in_the_way);
    fs::remove_all(dir_);
    write_run(dir_, jobs, jobs, Shard{});
    fs::remove(dir_ / in_the_way);
    fs::create_directories(dir_ / in_the_way / "something");
    std::map<std::string, std::string> before;
    for (const char* name : kReportDirFiles) {
      if (fs::is_regular_file(dir_ / name)) before[name] = read(dir_ / name);
    }
    const std::size_t descriptors = open_descriptors();
    try {
      ReportDir started(dir_, header(jobs, jobs, Shard{}));
      FAIL() << "started";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "cannot write the report directory '" + dir_.string() + "': '" +
                                           (dir_ / in_the_way).string() +
                                           "' is a directory, not a report file; move it away (nothing was changed)");
    }
    for (const auto& [name, text] : before) EXPECT_EQ(read(dir_ / name), text) << name;
    EXPECT_TRUE(fs::is_directory(dir_ / in_the_way / "something"));
    EXPECT_FALSE(has_temp_file(dir_));
    EXPECT_EQ(open_descriptors(), descriptors) << "a descriptor leaked";
  }
}

// report.json is derived from results.jsonl at the end of its run; beside another run's lines (a
// run started there and was killed before it removed report.json, as moeval's start used to
// allow) merge took report.json and silently merged the stale run.
TEST_F(ReportTest, AReportJsonOfAnotherRunIsRefused) {
  const auto jobs = quick_jobs();
  write_run(dir_ / "old", jobs, jobs, Shard{});
  RunDescription later;
  later.command = "moeval check --matrix quick --filter kind=golden";
  later.matrix = "quick";
  later.seeds = 1;
  later.jobs_selected = jobs.size();
  later.jobs_in_shard = jobs.size();
  { ReportDir killed(dir_ / "new", make_header(later)); }
  fs::copy_file(dir_ / "new" / "results.jsonl", dir_ / "old" / "results.jsonl", fs::copy_options::overwrite_existing);
  EXPECT_EQ(merge_error({dir_ / "old"}),
            "report directory '" + (dir_ / "old").string() +
                "': report.json and results.jsonl are of different runs (run.command is \"moeval check --matrix quick\" in "
                "report.json, \"moeval check --matrix quick --filter kind=golden\" in results.jsonl): a later run started "
                "there and did not finish; remove report.json to merge that run's lines, or rerun");
  // The killed run's own directory (its lines alone, no report.json to disagree with) still merges;
  // a finished run's two files agreeing is CheckCli.ShardsMergeIntoTheSingleRunReport's case.
  EXPECT_EQ(merge_error({dir_ / "new"}), "(merged)");
}

}  // namespace
}  // namespace moeval::cli
