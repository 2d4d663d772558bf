// The header of a report: what ran, where and when (docs/reports.md, "header").
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "shard.h"

namespace moeval::cli {

struct RunDescription {
  std::string command;               // the command line as typed (argv joined)
  std::string matrix;
  std::vector<std::string> filters;  // the --filter texts
  int seeds = 1;
  Shard shard;
  std::size_t jobs_selected = 0;     // after --filter, before --shard
  std::size_t jobs_in_shard = 0;
  std::vector<int> devices;          // the devices the run uses
};

// {"schema_version", "moeval": {"version", "commit"}, "run": {command, start_time (ISO 8601 UTC),
// host, devices: [{index, name, compute_capability, memory_bytes, pci_bus_id}], driver_version,
// cuda_runtime_version, matrix, filters, seeds, shard, jobs_selected, jobs_in_shard, contract}}.
// Device queries that fail leave their fields null; no device is needed.
nlohmann::json make_header(const RunDescription& run);

// "2026-11-30T17:02:03Z" for now.
std::string utc_now();

}  // namespace moeval::cli
