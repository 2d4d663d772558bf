// Argument checks with messages that say what was given and what is allowed (CLI11's Range says
// "Value two not in range" for a word, and prints DBL_MAX for an open bound).
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <initializer_list>
#include <string>
#include <vector>

namespace moeval::cli {

// Why `text` is not an integer in [lo, hi] ("" when it is).
inline std::string integer_error(const std::string& text, long long lo, long long hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) return "'" + text + "' is outside " + range;
  if (ec != std::errc() || end != text.data() + text.size()) return "'" + text + "' is not an integer; allowed: " + range;
  if (value < lo || value > hi) return text + " is outside the allowed range " + range;
  return "";
}

// An integer in [lo, hi]; CLI11 prefixes the message with the option ("--seeds: ...").
inline CLI::Validator integer_in(long long lo, long long hi) {
  return CLI::Validator([lo, hi](std::string& text) { return integer_error(text, lo, hi); },
                        "INT in " + std::to_string(lo) + ".." + std::to_string(hi));
}

// The elements of a comma-separated list, empty ones included ("0," is {"0", ""}).
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t comma = text.find(','); comma != std::string::npos; comma = text.find(',', start)) {
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  out.push_back(text.substr(start));
  return out;
}

// A comma-separated list of integers in [lo, hi] into `target`; the option may be repeated
// (--device 0 --device 1 is 0,1). The list is split here, not by CLI11's delimiter: that one drops
// empty elements, so "--device ," would have taken the next argument as its value and "0," would
// have passed. An empty element is an error.
template <class Int>
CLI::Option* add_integer_list(CLI::App& app, const std::string& name, std::vector<Int>& target, long long lo,
                              long long hi, const std::string& help) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  auto* option = app.add_option_function<std::vector<std::string>>(
      name,
      [&target](const std::vector<std::string>& lists) {
        target.clear();
        for (const std::string& list : lists) {
          for (const std::string& element : split_list(list)) target.push_back(Int(std::stoll(element)));
        }
      },
      help);
  option->check(CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        for (const std::string& element : split_list(text)) {
          if (element.empty()) {
            return "'" + text + "' has an empty element; allowed: integers in " + range + " separated by commas (e.g. " +
                   std::to_string(lo) + "," + std::to_string(lo + 1) + ")";
          }
          if (std::string why = integer_error(element, lo, hi); !why.empty()) return why;
        }
        return "";
      },
      "INT,... in " + range));
  return option;
}

// The first element of `values` that appears again, by its text (`describe`), for the message
// "<option> <value> is listed twice": a repeated value would be checked or timed twice and reported
// as two results of one name. "" when each appears once.
template <class T, class Describe>
std::string first_repeated(const std::vector<T>& values, Describe describe) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (values[j] == values[i]) return describe(values[i]);
    }
  }
  return "";
}

// A value that must not be empty: an empty path (--out '') would otherwise read as "not given" and
// fall back to a default (another directory, or no report at all). `what` says what to give.
inline CLI::Validator not_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string { return text.empty() ? "an empty value is not allowed; give " + what : ""; },
      "");
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
