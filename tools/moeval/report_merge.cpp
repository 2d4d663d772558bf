#include "report_merge.h"

#include <algorithm>
#include <map>
#include <set>

#include "exit_codes.h"

namespace moeval::cli {

namespace {

using nlohmann::json;

// "moeval 0.1.0 (commit 4c613bc…)": the build that wrote a report.
std::string build_of(const json& header) {
  const json& m = header.at("moeval");
  return "moeval " + m.at("version").get<std::string>() + " (commit " + m.at("commit").get<std::string>() + ")";
}

}  // namespace

std::vector<std::filesystem::path> expand_report_dirs(const std::vector<std::filesystem::path>& dirs) {
  std::vector<std::filesystem::path> out;
  for (const auto& d : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(d, ec)) {
      const bool exists = std::filesystem::exists(d, ec);
      throw UsageError("report directory '" + d.string() + "': " +
                       (exists ? "is not a directory (merge takes report directories, or directories of shards)"
                               : "does not exist"));
    }
    std::vector<std::filesystem::path> shards;
    for (const auto& e : std::filesystem::directory_iterator(d)) {
      if (e.is_directory() && e.path().filename().string().rfind("shard-", 0) == 0) shards.push_back(e.path());
    }
    std::sort(shards.begin(), shards.end());
    std::string report;  // the run report held by d itself, if any
    for (const char* name : {"report.json", "results.jsonl"}) {
      if (report.empty() && std::filesystem::exists(std::filesystem::symlink_status(d / name))) report = name;
    }
    if (!report.empty() && !shards.empty()) {
      // Which one is the run to merge? A single run and later shards (or the reverse) share --out
      // DIR; taking either silently would merge a stale run.
      throw UsageError("report directory '" + d.string() + "': holds both a report (" + report + ") and shard directories (" +
                       shards.front().filename().string() + (shards.size() > 1 ? ", ..." : "") +
                       ") from different runs; give the shard directories or move one of them away");
    }
    if (!report.empty()) {
      out.push_back(d);
      continue;
    }
    if (shards.empty()) {
      throw UsageError("report directory '" + d.string() + "': holds no report.json, results.jsonl or shard-* directory");
    }
    out.insert(out.end(), shards.begin(), shards.end());
  }
  return out;
}

RunReport merge_runs(const std::vector<RunReport>& runs, const std::vector<std::filesystem::path>& dirs) {
  if (runs.empty()) throw UsageError("report merge: no report directory given");
  const json& first = runs.front().header.at("run");
  const std::string first_build = build_of(runs.front().header);
  const int count = first.at("shard").at("count").get<int>();
  std::map<int, std::size_t> by_shard;  // shard index → position in runs
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const json& run = runs[r].header.at("run");
    // Shards of two builds may judge differently (another kernel, another bound): one report
    // cannot name both.
    if (const std::string build = build_of(runs[r].header); build != first_build) {
      throw UsageError("report merge: '" + dirs[r].string() + "' was written by " + build + " but '" + dirs[0].string() +
                       "' by " + first_build + "; merge the shards of one build (rerun the shards with one moeval)");
    }
    for (const char* key : {"matrix", "filters", "seeds", "contract", "jobs_selected"}) {
      if (run.value(key, json()) != first.value(key, json())) {
        throw UsageError("report merge: '" + dirs[r].string() + "' and '" + dirs[0].string() + "' are not shards of one selection: " +
                         key + " is " + run.value(key, json()).dump() + " there and " + first.value(key, json()).dump() + " here");
      }
    }
    const int shard_count = run.at("shard").at("count").get<int>();
    if (shard_count != count) {
      throw UsageError("report merge: '" + dirs[r].string() + "' is a shard of " + std::to_string(shard_count) + " but '" +
                       dirs[0].string() + "' one of " + std::to_string(count));
    }
    const int index = run.at("shard").at("index").get<int>();
    if (const auto [it, fresh] = by_shard.emplace(index, r); !fresh) {
      throw UsageError("report merge: shard " + std::to_string(index) + "/" + std::to_string(count) + " is given twice: '" +
                       dirs[it->second].string() + "' and '" + dirs[r].string() + "'");
    }
  }
  for (int i = 0; i < count; ++i) {
    if (!by_shard.count(i)) {
      throw UsageError("report merge: shard " + std::to_string(i) + "/" + std::to_string(count) +
                       " is missing; give every shard's directory");
    }
  }

  RunReport merged;
  merged.header = runs[by_shard.at(0)].header;
  json& run = merged.header.at("run");
  const long selected = first.at("jobs_selected").get<long>();
  run["shard"] = {{"index", 0}, {"count", 1}, {"source", "merge"}};
  run["jobs_in_shard"] = selected;
  run["devices"] = json::array();
  run["hosts"] = json::array();
  run["merged_from"] = json::array();
  std::map<long, std::size_t> seen;  // check index → position in runs
  bool complete = true, interrupted = false;
  double duration = 0;
  std::string end_time;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const json& h = runs[r].header.at("run");
    for (const auto& d : h.at("devices")) run["devices"].push_back(d);
    if (h.contains("host")) {
      run["hosts"].push_back(h.at("host"));
    } else {
      for (const auto& host : h.at("hosts")) run["hosts"].push_back(host);  // a merged report merged again
    }
    run["merged_from"].push_back(dirs[r].string());
    run["start_time"] = std::min(run.at("start_time").get<std::string>(), h.at("start_time").get<std::string>());
    for (const auto& c : runs[r].checks) {
      const long index = c.at("index").get<long>();
      const std::string id = c.at("id").get<std::string>();
      if (index < 0 || index >= selected) {
        throw UsageError("report merge: '" + dirs[r].string() + "' holds check index " + std::to_string(index) +
                         " outside the selection of " + std::to_string(selected) + " jobs");
      }
      if (const auto [it, fresh] = seen.emplace(index, r); !fresh) {
        throw UsageError(it->second == r ? "report merge: '" + dirs[r].string() + "' holds check " + std::to_string(index) +
                                               " (" + id + ") twice"
                                         : "report merge: check " + std::to_string(index) + " (" + id + ") is in two shards: '" +
                                               dirs[it->second].string() + "' and '" + dirs[r].string() + "'");
      }
      merged.checks.push_back(c);
    }
    complete = complete && runs[r].complete();
    if (runs[r].complete()) {
      const json& end = runs[r].end;
      interrupted = interrupted || end.at("interrupted").get<bool>();
      duration = std::max(duration, end.at("duration_s").get<double>());
      end_time = std::max(end_time, end.at("end_time").get<std::string>());
    }
  }
  run.erase("host");
  merged.sort_checks();
  if (complete) merged.end = {{"end_time", end_time}, {"duration_s", duration}, {"interrupted", interrupted}};
  return merged;
}

}  // namespace moeval::cli
