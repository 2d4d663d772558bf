// Test support: comparing two reports of the same selection (a merged one against a single run's).
#pragma once

#include <nlohmann/json.hpp>

namespace moeval::cli::testing {

// What may differ between a merged report and a single run's: when and where it ran.
inline nlohmann::json without_timing(nlohmann::json j) {
  for (const char* k : {"start_time", "end_time", "duration_s", "host", "hosts", "merged_from", "devices", "command"}) {
    j["run"].erase(k);
  }
  j["run"]["shard"].erase("source");
  for (auto& c : j["checks"]) {
    c.erase("time_s");
    c.erase("device");
  }
  return j;
}

}  // namespace moeval::cli::testing
