#include "run_report.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "exit_codes.h"

namespace moeval::cli {
namespace {

void require_schema(const nlohmann::json& j, const std::filesystem::path& file) {
  if (!j.is_object() || !j.contains("schema_version")) {
    throw UsageError("report '" + file.string() + "': has no schema_version; it is not a moeval report");
  }
  if (j["schema_version"] != kReportSchemaVersion) {
    throw UsageError("report '" + file.string() + "': schema_version is " + j["schema_version"].dump() +
                     " but this moeval reads version " + std::to_string(kReportSchemaVersion));
  }
}

}  // namespace

nlohmann::json RunReport::summary() const {
  long passed = 0, failed = 0, skipped = 0;
  for (const auto& c : checks) {
    const std::string s = c.value("status", "");
    (s == "PASS" ? passed : s == "FAIL" ? failed : skipped) += 1;
  }
  const long in_shard = header.value("run", nlohmann::json::object()).value("jobs_in_shard", long(checks.size()));
  return {{"passed", passed}, {"failed", failed}, {"skipped", skipped},
          {"not_run", std::max(0L, in_shard - long(checks.size()))}};
}

void RunReport::sort_checks() {
  std::stable_sort(checks.begin(), checks.end(),
                   [](const nlohmann::json& a, const nlohmann::json& b) { return a.value("index", 0L) < b.value("index", 0L); });
}

nlohmann::json to_report_json(const RunReport& report) {
  nlohmann::json j = report.header;
  j.erase("type");
  j["complete"] = report.complete();
  j["interrupted"] = report.complete() ? report.end.value("interrupted", false) : false;
  j["run"]["end_time"] = report.complete() ? nlohmann::json(report.end.value("end_time", "")) : nlohmann::json(nullptr);
  j["run"]["duration_s"] = report.complete() ? nlohmann::json(report.end.value("duration_s", 0.0)) : nlohmann::json(nullptr);
  j["summary"] = report.summary();
  RunReport sorted = report;
  sorted.sort_checks();
  j["checks"] = nlohmann::json::array();
  for (nlohmann::json c : sorted.checks) {
    c.erase("type");
    j["checks"].push_back(std::move(c));
  }
  return j;
}

RunReport load_run(const std::filesystem::path& dir) {
  const auto report_json = dir / "report.json";
  const auto lines = dir / "results.jsonl";
  RunReport r;
  if (std::filesystem::exists(report_json)) {
    std::ifstream in(report_json);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) throw UsageError("report '" + report_json.string() + "': is not valid JSON");
    require_schema(j, report_json);
    for (auto& c : j.at("checks")) r.checks.push_back(c);
    if (j.value("complete", false)) {
      r.end = {{"end_time", j["run"].value("end_time", "")}, {"duration_s", j["run"].value("duration_s", 0.0)},
               {"interrupted", j.value("interrupted", false)}};
    }
    for (const char* k : {"checks", "summary", "complete", "interrupted"}) j.erase(k);
    j["run"].erase("end_time");
    j["run"].erase("duration_s");
    r.header = std::move(j);
    return r;
  }
  if (!std::filesystem::exists(lines)) {
    throw UsageError("report directory '" + dir.string() + "': holds neither report.json nor results.jsonl");
  }
  std::ifstream in(lines);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      if (in.peek() == std::char_traits<char>::eof()) break;  // the line a killed run was writing
      throw UsageError("report '" + lines.string() + "': line " + std::to_string(number) + " is not valid JSON");
    }
    const std::string type = j.value("type", "");
    if (number == 1) {
      if (type != "header") throw UsageError("report '" + lines.string() + "': line 1 is not the run's header");
      require_schema(j, lines);
      j.erase("type");
      r.header = std::move(j);
    } else if (type == "check") {
      j.erase("type");
      r.checks.push_back(std::move(j));
    } else if (type == "end") {
      j.erase("type");
      r.end = std::move(j);
    }
  }
  if (r.header.is_null()) throw UsageError("report '" + lines.string() + "': is empty");
  return r;
}

}  // namespace moeval::cli
