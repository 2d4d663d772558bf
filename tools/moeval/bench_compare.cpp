#include "bench_compare.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "exit_codes.h"

namespace moeval::cli {
namespace {

using CellKey = std::pair<std::string, std::int64_t>;  // shape, tokens

std::map<CellKey, nlohmann::json> cells_of(const nlohmann::json& run, const std::string& name) {
  if (!run.is_object() || !run.contains("cells") || !run["cells"].is_array()) {
    throw UsageError("--compare: '" + name + "' is not a `moeval bench --json` report (no \"cells\" array)");
  }
  std::map<CellKey, nlohmann::json> out;
  for (const auto& c : run["cells"]) {
    if (!c.contains("shape") || !c["shape"].is_string() || !c.contains("tokens") || !c["tokens"].is_number_integer()) {
      throw UsageError("--compare: '" + name + "' holds a cell without \"shape\" and \"tokens\"");
    }
    out[{c["shape"].get<std::string>(), c["tokens"].get<std::int64_t>()}] = c;
  }
  return out;
}

// A top-level string of a bench report ("device", "l2_flush"), `fallback` when absent; any other
// type is refused naming the file (reports are written by moeval bench, but may be edited).
std::string string_field(const nlohmann::json& run, const char* key, const std::string& fallback, const std::string& name) {
  const auto it = run.find(key);
  if (it == run.end()) return fallback;
  if (!it->is_string()) {
    throw UsageError("--compare: '" + name + "': \"" + key + "\" is " + it->dump() + "; allowed: a string");
  }
  return it->get<std::string>();
}

bool has_time(const nlohmann::json& cell, const char* key) {
  return cell.contains(key) && cell[key].is_number() && cell[key].get<double>() > 0;
}

}  // namespace

std::string compare_bench(const nlohmann::json& a, const nlohmann::json& b, const std::string& name_a,
                          const std::string& name_b) {
  const auto ca = cells_of(a, name_a);
  const auto cb = cells_of(b, name_b);
  std::string out = "A = " + name_a + " (" + string_field(a, "device", "?", name_a) + ")\nB = " + name_b + " (" +
                    string_field(b, "device", "?", name_b) + ")\ntimes in us; B/A > 1: B is slower\n";
  // Reports from before the option have no "l2_flush": they were flushed dirty.
  const std::string flush_a = string_field(a, "l2_flush", "dirty", name_a),
                    flush_b = string_field(b, "l2_flush", "dirty", name_b);
  if (flush_a != flush_b) {
    out += "note: A was timed after a " + flush_a + " L2 flush and B after a " + flush_b +
           " one; decode-sized cells differ by that alone (docs/bench.md)\n";
  }
  // The forced options of an A/B (reports from before "options" have none: nothing to name).
  if (a.contains("options") && b.contains("options") && a["options"].is_object() && b["options"].is_object()) {
    const nlohmann::json &oa = a["options"], &ob = b["options"];
    for (const auto& [key, value_a] : oa.items()) {
      const auto value_b = ob.find(key);
      if (value_b == ob.end()) {
        out += "options: " + key + " A = " + value_a.dump() + ", not in B\n";
      } else if (*value_b != value_a) {
        out += "options: " + key + " A = " + value_a.dump() + ", B = " + value_b->dump() + "\n";
      }
    }
    for (const auto& [key, value_b] : ob.items()) {
      if (!oa.contains(key)) out += "options: " + key + " not in A, B = " + value_b.dump() + "\n";
    }
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %6s %-26s %10s %10s %7s\n", "shape", "M", "path", "A", "B", "B/A");
  out += line;
  std::map<std::string, std::pair<double, int>> log_sum;  // path → (Σ log ratio, count)
  for (const auto& [key, cell_a] : ca) {
    const auto it = cb.find(key);
    if (it == cb.end()) {
      out += key.first + " M=" + std::to_string(key.second) + ": only in A\n";
      continue;
    }
    for (const char* path : kBenchTimes) {
      if (!has_time(cell_a, path) || !has_time(it->second, path)) continue;
      const double ta = cell_a[path].get<double>(), tb = it->second[path].get<double>();
      std::snprintf(line, sizeof line, "%-22s %6lld %-26s %10.1f %10.1f %7.3f\n", key.first.c_str(),
                    static_cast<long long>(key.second), path, ta * 1e6, tb * 1e6, tb / ta);
      out += line;
      auto& [sum, count] = log_sum[path];
      sum += std::log(tb / ta);
      ++count;
    }
  }
  for (const auto& [key, cell_b] : cb) {
    if (!ca.count(key)) out += key.first + " M=" + std::to_string(key.second) + ": only in B\n";
  }
  for (const char* path : kBenchTimes) {
    const auto it = log_sum.find(path);
    if (it == log_sum.end()) continue;
    std::snprintf(line, sizeof line, "geometric mean B/A %-26s %7.3f over %d cells\n", path,
                  std::exp(it->second.first / it->second.second), it->second.second);
    out += line;
  }
  return out;
}

}  // namespace moeval::cli
