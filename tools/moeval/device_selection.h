// Small helpers shared by the subcommands: which devices to use, and writing a JSON report.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace moeval::cli {

// The devices named by --device, checked against the visible ones before any work starts (every
// visible device when none is named; empty when there is no device). Throws std::invalid_argument
// naming a device that does not exist.
std::vector<int> validated_devices(const std::vector<int>& requested);

// Writes `report` to `path` through a temporary file and a rename, so a reader never sees half a
// report; throws std::runtime_error naming the path when it cannot be written.
void write_json_file(const std::string& path, const nlohmann::json& report);

}  // namespace moeval::cli
