// Argument checks with messages that say what was given and what is allowed (CLI11's Range says
// "Value two not in range" for a word, and prints DBL_MAX for an open bound).
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <initializer_list>
#include <string>
#include <vector>

namespace moeval::cli {

// An integer in [lo, hi]; CLI11 prefixes the message with the option ("--seeds: ...").
inline CLI::Validator integer_in(long long lo, long long hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc::result_out_of_range) return "'" + text + "' is outside " + range;
        if (ec != std::errc() || end != text.data() + text.size()) return "'" + text + "' is not an integer; allowed: " + range;
        if (value < lo || value > hi) return text + " is outside the allowed range " + range;
        return "";
      },
      "INT in " + range);
}

// An integer from `allowed` (listed in the message as given, e.g. "0, 8, 16").
inline CLI::Validator integer_of(std::initializer_list<long long> allowed) {
  std::string list;
  for (long long v : allowed) list += (list.empty() ? "" : ", ") + std::to_string(v);
  std::vector<long long> values(allowed);
  return CLI::Validator(
      [values, list](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size()) return "'" + text + "' is not an integer; allowed: " + list;
        for (long long v : values) {
          if (v == value) return "";
        }
        return text + " is not one of the allowed values " + list;
      },
      "INT in {" + list + "}");
}

}  // namespace moeval::cli
