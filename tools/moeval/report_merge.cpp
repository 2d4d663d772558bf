#include "report_merge.h"

#include <algorithm>
#include <map>
#include <set>

#include "exit_codes.h"

namespace moeval::cli {

std::vector<std::filesystem::path> expand_report_dirs(const std::vector<std::filesystem::path>& dirs) {
  std::vector<std::filesystem::path> out;
  for (const auto& d : dirs) {
    if (!std::filesystem::is_directory(d)) throw UsageError("report directory '" + d.string() + "': does not exist");
    if (std::filesystem::exists(d / "report.json") || std::filesystem::exists(d / "results.jsonl")) {
      out.push_back(d);
      continue;
    }
    std::vector<std::filesystem::path> shards;
    for (const auto& e : std::filesystem::directory_iterator(d)) {
      if (e.is_directory() && e.path().filename().string().rfind("shard-", 0) == 0) shards.push_back(e.path());
    }
    if (shards.empty()) {
      throw UsageError("report directory '" + d.string() + "': holds no report.json, results.jsonl or shard-* directory");
    }
    std::sort(shards.begin(), shards.end());
    out.insert(out.end(), shards.begin(), shards.end());
  }
  return out;
}

RunReport merge_runs(const std::vector<RunReport>& runs, const std::vector<std::filesystem::path>& dirs) {
  if (runs.empty()) throw UsageError("report merge: no report directory given");
  const nlohmann::json& first = runs.front().header["run"];
  const int count = first["shard"].value("count", 1);
  std::map<int, std::size_t> by_shard;  // shard index → position in runs
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const nlohmann::json& run = runs[r].header["run"];
    for (const char* key : {"matrix", "filters", "seeds", "contract", "jobs_selected"}) {
      if (run.value(key, nlohmann::json()) != first.value(key, nlohmann::json())) {
        throw UsageError("report merge: '" + dirs[r].string() + "' and '" + dirs[0].string() + "' are not shards of one selection: " +
                         key + " is " + run.value(key, nlohmann::json()).dump() + " there and " +
                         first.value(key, nlohmann::json()).dump() + " here");
      }
    }
    if (run["shard"].value("count", 1) != count) {
      throw UsageError("report merge: '" + dirs[r].string() + "' is a shard of " + std::to_string(run["shard"].value("count", 1)) +
                       " but '" + dirs[0].string() + "' one of " + std::to_string(count));
    }
    const int index = run["shard"].value("index", 0);
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
  nlohmann::json& run = merged.header["run"];
  run["shard"] = {{"index", 0}, {"count", 1}, {"source", "merge"}};
  run["jobs_in_shard"] = first.value("jobs_selected", 0);
  run["devices"] = nlohmann::json::array();
  run["hosts"] = nlohmann::json::array();
  run["merged_from"] = nlohmann::json::array();
  const long selected = first.value("jobs_selected", 0L);
  std::set<long> seen;
  bool complete = true, interrupted = false;
  double duration = 0;
  std::string end_time;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const nlohmann::json& h = runs[r].header["run"];
    for (const auto& d : h.value("devices", nlohmann::json::array())) run["devices"].push_back(d);
    run["hosts"].push_back(h.value("host", ""));
    run["merged_from"].push_back(dirs[r].string());
    run["start_time"] = std::min(run.value("start_time", std::string()), h.value("start_time", std::string()));
    for (const auto& c : runs[r].checks) {
      const long index = c.value("index", -1L);
      if (index < 0 || index >= selected) {
        throw UsageError("report merge: '" + dirs[r].string() + "' holds check index " + std::to_string(index) +
                         " outside the selection of " + std::to_string(selected) + " jobs");
      }
      if (!seen.insert(index).second) {
        throw UsageError("report merge: check " + std::to_string(index) + " (" + c.value("id", "") + ") is in two shards");
      }
      merged.checks.push_back(c);
    }
    complete = complete && runs[r].complete();
    if (runs[r].complete()) {
      interrupted = interrupted || runs[r].end.value("interrupted", false);
      duration = std::max(duration, runs[r].end.value("duration_s", 0.0));
      end_time = std::max(end_time, runs[r].end.value("end_time", std::string()));
    }
  }
  run.erase("host");
  merged.sort_checks();
  if (complete) merged.end = {{"end_time", end_time}, {"duration_s", duration}, {"interrupted", interrupted}};
  return merged;
}

}  // namespace moeval::cli
