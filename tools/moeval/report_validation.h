// What a report read from disk (report.json or results.jsonl, written by any moeval or by hand)
// must hold before `report merge` uses it: every field merge and the report writers read, with
// its type and range. A report that lacks one is refused with a UsageError naming the file, the
// field and what is allowed, never read past (a missing key read through const operator[] is
// undefined behaviour) or passed on as a library's exception text.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace moeval::cli {

// A value as a message shows it: its JSON text, cut to `limit` characters ("..." at the end); the
// word "missing" for an absent one (null pointer).
std::string shown_value(const nlohmann::json* value, std::size_t limit = 60);

// `source` names the file and, for a line of results.jsonl, the line: "report 'DIR/results.jsonl',
// line 1". The header: schema_version already checked; moeval.{version, commit}; run.{matrix,
// filters, seeds, contract, shard.{index, count}, jobs_selected, jobs_in_shard, devices, host,
// start_time}.
void validate_report_header(const nlohmann::json& header, const std::string& source);

// One check record: an object with index (an integer in [0, jobs_selected)), id and status
// (PASS, FAIL or SKIPPED). `field` is how the record is named in messages ("checks[3]", "check").
void validate_check_record(const nlohmann::json& check, long jobs_selected, const std::string& source,
                           const std::string& field);

// The end line of results.jsonl: end_time (a string), duration_s (a number), interrupted (a boolean).
void validate_report_end(const nlohmann::json& end, const std::string& source);

// How report.json says the run ended: complete (a boolean) and, when true, run.end_time,
// run.duration_s and interrupted as on the end line; checks (an array).
void validate_report_json_ending(const nlohmann::json& report, const std::string& source);

}  // namespace moeval::cli
