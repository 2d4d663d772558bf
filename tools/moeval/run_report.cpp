#include "run_report.h"

#include <algorithm>
#include <sstream>

#include "exit_codes.h"
#include "json_text.h"
#include "report_validation.h"
#include "text_file.h"

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

// The file's text; one that cannot be read is refused with the system's reason ("Is a
// directory", "Permission denied"), not mistaken for an empty or corrupt one.
std::string read_report_file(const std::filesystem::path& file, bool first_line = false) {
  try {
    return first_line ? read_first_line(file) : read_text_file(file);
  } catch (const std::exception& e) {
    throw UsageError("report '" + file.string() + "': cannot be read: " + e.what());
  }
}

// One field of a header as a message shows it (shown_value).
std::string field_text(const nlohmann::json& header, const nlohmann::json::json_pointer& at) {
  return shown_value(header.contains(at) ? &header.at(at) : nullptr, 80);
}

// report.json is derived from results.jsonl when its run ends, so both hold that run's header. A
// report.json beside another run's lines (a run that started in the directory and was killed
// before it removed report.json, as moeval's start once allowed, or files copied together) would
// be taken for the directory's run and the newer lines ignored: refused, naming the first field
// that differs.
void require_one_run(const std::filesystem::path& dir, const nlohmann::json& report_header) {
  const auto lines = dir / "results.jsonl";
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(lines, ec))) return;  // report.json alone
  nlohmann::json header = parse_json_text(read_report_file(lines, true), "report '" + lines.string() + "', line 1");
  std::string difference = "line 1 of results.jsonl is not a run header";
  if (header.is_object()) {
    header.erase("type");
    if (header == report_header) return;
    // The first difference, as a JSON pointer ("/run/start_time") made a field name ("run.start_time").
    const std::string pointer = nlohmann::json::diff(report_header, header).front().value("path", "");
    const nlohmann::json::json_pointer at(pointer);
    std::string field = pointer.substr(1);
    for (char& c : field) c = c == '/' ? '.' : c;
    difference =
        field + " is " + field_text(report_header, at) + " in report.json, " + field_text(header, at) + " in results.jsonl";
  }
  throw UsageError("report directory '" + dir.string() + "': report.json and results.jsonl are of different runs (" + difference +
                   "): a later run started there and did not finish; remove report.json to merge that run's lines, or rerun");
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

std::string report_line(nlohmann::json record, ReportLine type) {
  record["type"] = type == ReportLine::header ? "header" : type == ReportLine::check ? "check" : "end";
  return json_text(record) + "\n";
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
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(report_json, ec))) {
    const std::string source = "report '" + report_json.string() + "'";
    nlohmann::json j = parse_json_text(read_report_file(report_json), source);
    if (j.is_discarded()) throw UsageError(source + ": is not valid JSON");
    require_schema(j, report_json);
    validate_report_header(j, source);
    validate_report_json_ending(j, source);
    const long selected = j.at("run").at("jobs_selected").get<long>();
    const nlohmann::json& checks = j.at("checks");
    for (std::size_t i = 0; i < checks.size(); ++i) {
      validate_check_record(checks[i], selected, source, "checks[" + std::to_string(i) + "]");
      r.checks.push_back(checks[i]);
    }
    if (j.at("complete").get<bool>()) {
      r.end = {{"end_time", j.at("run").at("end_time")}, {"duration_s", j.at("run").at("duration_s")},
               {"interrupted", j.at("interrupted")}};
    }
    for (const char* k : {"checks", "summary", "complete", "interrupted"}) j.erase(k);
    j.at("run").erase("end_time");
    j.at("run").erase("duration_s");
    require_one_run(dir, j);
    r.header = std::move(j);
    return r;
  }
  if (!std::filesystem::exists(std::filesystem::symlink_status(lines, ec))) {
    throw UsageError("report directory '" + dir.string() + "': holds neither report.json nor results.jsonl");
  }
  std::istringstream in(read_report_file(lines));
  std::string line;
  int number = 0;
  long selected = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string source = "report '" + lines.string() + "', line " + std::to_string(number);
    nlohmann::json j = parse_json_text(line, source);
    if (j.is_discarded()) {
      if (in.peek() == std::char_traits<char>::eof()) break;  // the line a killed run was writing
      throw UsageError("report '" + lines.string() + "': line " + std::to_string(number) + " is not valid JSON");
    }
    const nlohmann::json* type_field = j.is_object() && j.contains("type") ? &j.at("type") : nullptr;
    const std::string type = type_field && type_field->is_string() ? type_field->get<std::string>() : "";
    if (number == 1) {
      if (type != "header") throw UsageError("report '" + lines.string() + "': line 1 is not the run's header");
      require_schema(j, lines);
      validate_report_header(j, source);
      selected = j.at("run").at("jobs_selected").get<long>();
      j.erase("type");
      r.header = std::move(j);
    } else if (type == "check") {
      validate_check_record(j, selected, source, "check");
      j.erase("type");
      r.checks.push_back(std::move(j));
    } else if (type == "end") {
      validate_report_end(j, source);
      j.erase("type");
      r.end = std::move(j);
    } else {
      throw UsageError(source + ": type is " + (type_field ? type_field->dump() : std::string("missing")) +
                       "; allowed: \"check\" or \"end\" (the header is line 1)");
    }
  }
  if (r.header.is_null()) throw UsageError("report '" + lines.string() + "': is empty");
  return r;
}

}  // namespace moeval::cli
