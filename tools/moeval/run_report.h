// The report of one run of `moeval check --out DIR` (schema version kReportSchemaVersion), held in
// memory: the run's header, one record per check, and how the run ended. docs/reports.md describes
// every field. A run is written as DIR/results.jsonl while it goes (report_dir.h) and as
// report.json, results.csv and junit.xml at the end (report_formats.h); `moeval report merge`
// rebuilds one from the files of several shards (report_merge.h).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace moeval::cli {

// 2: a check's `reference` says what judged it: "cpu-fp64", "gpu-cublas" or "golden file" (1 had
// "cpu" for the first two). Readers refuse any other version than their own.
inline constexpr int kReportSchemaVersion = 2;

struct RunReport {
  // {"schema_version", "moeval": {version, commit}, "run": {command, start_time, host, devices,
  //  driver_version, cuda_runtime_version, matrix, filters, seeds, shard, jobs_selected,
  //  jobs_in_shard, contract}}
  nlohmann::json header;
  std::vector<nlohmann::json> checks;  // each with "index" (its place in the selection)
  // {"end_time", "duration_s", "interrupted"}; null while the run goes (or when it was killed).
  nlohmann::json end;

  bool complete() const { return !end.is_null(); }
  // passed / failed / skipped counted from the records; not_run = jobs in the shard without one.
  nlohmann::json summary() const;
  // Records ordered by index (workers on several devices finish out of order).
  void sort_checks();
};

// report.json: header fields, "complete", "interrupted", "duration_s", "summary" and "checks".
nlohmann::json to_report_json(const RunReport& report);

// The kinds of line of results.jsonl, in the order a run writes them.
enum class ReportLine { header, check, end };

// One line of results.jsonl, newline included: `record` with its "type" tag ("header", "check",
// "end"), which load_run reads and takes off again. The one place the tag is written.
std::string report_line(nlohmann::json record, ReportLine type);

// Reads DIR/report.json, or — for a run that was killed before it wrote one — DIR/results.jsonl
// (its complete lines; a torn last line is dropped). Throws UsageError naming the file and what is
// wrong: missing, unreadable (the system's reason), not JSON, another schema version, or a field
// that merge and the report writers read missing, mistyped or out of range (report_validation.h),
// or a report.json beside a results.jsonl whose header is another run's (a later run that was
// killed at its start: taking report.json would merge the stale run).
RunReport load_run(const std::filesystem::path& dir);

}  // namespace moeval::cli
