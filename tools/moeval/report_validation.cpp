#include "report_validation.h"

#include <limits>

#include "exit_codes.h"

namespace moeval::cli {
namespace {

using nlohmann::json;

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

[[noreturn]] void refuse(const std::string& source, const std::string& field, const json* value, const std::string& allowed) {
  throw UsageError(source + ": " + field + " is " + shown_value(value) + "; allowed: " + allowed);
}

const json& object_at(const json& parent, const char* key, const std::string& source, const std::string& field) {
  const json* v = member(parent, key);
  if (!v || !v->is_object()) refuse(source, field, v, "an object");
  return *v;
}

void require_string(const json& parent, const char* key, const std::string& source, const std::string& field) {
  const json* v = member(parent, key);
  if (!v || !v->is_string()) refuse(source, field, v, "a string");
}

long integer_at(const json& parent, const char* key, long lo, long hi, const std::string& source, const std::string& field) {
  const json* v = member(parent, key);
  const std::string range = hi == std::numeric_limits<long>::max() ? "an integer from " + std::to_string(lo)
                            : hi < lo                                 ? "none (nothing is in range)"
                                                                      : "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
  if (!v || !v->is_number_integer()) refuse(source, field, v, range);
  const long value = v->get<long>();
  if (value < lo || value > hi) refuse(source, field, v, range);
  return value;
}

}  // namespace

std::string shown_value(const json* value, std::size_t limit) {
  if (!value) return "missing";
  const std::string text = value->dump();
  return text.size() > limit ? text.substr(0, limit - 3) + "..." : text;
}

void validate_report_header(const json& header, const std::string& source) {
  const json& moeval = object_at(header, "moeval", source, "moeval");
  require_string(moeval, "version", source, "moeval.version");
  require_string(moeval, "commit", source, "moeval.commit");
  const json& run = object_at(header, "run", source, "run");
  for (const char* key : {"matrix", "contract", "start_time"}) require_string(run, key, source, std::string("run.") + key);
  // A run names its host; a merged report the hosts of its shards.
  if (const json* hosts = member(run, "hosts"); hosts && !member(run, "host")) {
    if (!hosts->is_array()) refuse(source, "run.hosts", hosts, "an array (a merged report's hosts)");
  } else {
    require_string(run, "host", source, "run.host");
  }
  const json* filters = member(run, "filters");
  bool strings = filters && filters->is_array();
  for (std::size_t i = 0; strings && i < filters->size(); ++i) strings = (*filters)[i].is_string();
  if (!strings) refuse(source, "run.filters", filters, "an array of strings (the --filter texts)");
  const json* devices = member(run, "devices");
  if (!devices || !devices->is_array()) refuse(source, "run.devices", devices, "an array");
  integer_at(run, "seeds", 1, 1000, source, "run.seeds");
  const json& shard = object_at(run, "shard", source, "run.shard");
  const long count = integer_at(shard, "count", 1, 100000, source, "run.shard.count");
  integer_at(shard, "index", 0, count - 1, source, "run.shard.index");
  const long selected = integer_at(run, "jobs_selected", 0, std::numeric_limits<long>::max(), source, "run.jobs_selected");
  integer_at(run, "jobs_in_shard", 0, selected, source, "run.jobs_in_shard");
}

void validate_check_record(const json& check, long jobs_selected, const std::string& source, const std::string& field) {
  if (!check.is_object()) refuse(source, field, &check, "an object with index, id and status");
  integer_at(check, "index", 0, jobs_selected - 1, source, field + ".index");
  require_string(check, "id", source, field + ".id");
  const json* status = member(check, "status");
  if (!status || !status->is_string() || (*status != "PASS" && *status != "FAIL" && *status != "SKIPPED")) {
    refuse(source, field + ".status", status, "PASS, FAIL or SKIPPED");
  }
}

namespace {

// How a run ended, as the end line and report.json both say it: end_time and duration_s in
// `times` (the end line itself; report.json's "run", named by `prefix`), interrupted in `flag`.
void validate_ending(const json& times, const std::string& prefix, const json& flag, const std::string& source) {
  require_string(times, "end_time", source, prefix + "end_time");
  const json* duration = member(times, "duration_s");
  if (!duration || !duration->is_number()) refuse(source, prefix + "duration_s", duration, "a number (seconds)");
  const json* interrupted = member(flag, "interrupted");
  if (!interrupted || !interrupted->is_boolean()) refuse(source, "interrupted", interrupted, "true or false");
}

}  // namespace

void validate_report_end(const json& end, const std::string& source) { validate_ending(end, "", end, source); }

void validate_report_json_ending(const json& report, const std::string& source) {
  const json* checks = member(report, "checks");
  if (!checks || !checks->is_array()) refuse(source, "checks", checks, "an array of check records");
  const json* complete = member(report, "complete");
  if (!complete || !complete->is_boolean()) refuse(source, "complete", complete, "true or false");
  if (complete->get<bool>()) validate_ending(object_at(report, "run", source, "run"), "run.", report, source);
}

}  // namespace moeval::cli
