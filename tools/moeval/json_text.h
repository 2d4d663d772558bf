// The JSON text the reports write (results.jsonl, report.json, --json). Their strings hold argv
// and file paths, which on Linux may be any bytes, not UTF-8: nlohmann's default dump throws on
// those (type_error.316) half-way through a write, so invalid UTF-8 is written as U+FFFD instead.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace moeval::cli {

// indent -1: one line (results.jsonl); 2: report.json and --json.
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace moeval::cli
