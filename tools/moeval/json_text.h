// The text the reports write and read. Their strings hold argv and file paths, which on Linux may
// be any bytes, not UTF-8: nlohmann's default dump throws on those (type_error.316) half-way through
// a write, and an XML reader refuses the whole junit.xml, so invalid UTF-8 is written as U+FFFD.
// What they read comes from disk and is nested as its writer chose: see parse_json_text.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "exit_codes.h"

namespace moeval::cli {

// indent -1: one line (results.jsonl); 2: report.json and --json.
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `s` with every byte that does not start or continue a well-formed UTF-8 sequence (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF) replaced by U+FFFD, as json_text does.
inline std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto cont = [&](std::size_t i, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return i < s.size() && static_cast<unsigned char>(s[i]) >= lo && static_cast<unsigned char>(s[i]) <= hi;
  };
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;  // length of a well-formed sequence starting at i, 0 if none
    if (c < 0x80) n = 1;
    else if (c >= 0xC2 && c <= 0xDF) n = cont(i + 1) ? 2 : 0;
    else if (c == 0xE0) n = cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) n = cont(i + 1) && cont(i + 2) ? 3 : 0;
    else if (c == 0xED) n = cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
    else if (c == 0xF0) n = cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    else if (c >= 0xF1 && c <= 0xF3) n = cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    else if (c == 0xF4) n = cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

// Nothing moeval writes nests deeper than a few levels. A value nested thousands deep still parses
// (the parser keeps its own stack), but each later copy, comparison or diff of it recurses once per
// level and overflows the call stack: refused while parsing instead.
constexpr int kMaxJsonDepth = 64;

// JSON read from a file: discarded (is_discarded()) where `text` is not JSON, so the caller says
// which file; UsageError naming `source` where it nests deeper than kMaxJsonDepth.
inline nlohmann::json parse_json_text(const std::string& text, const std::string& source) {
  struct TooDeep {};
  try {
    return nlohmann::json::parse(
        text,
        [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
          if (depth > kMaxJsonDepth) throw TooDeep{};
          return true;
        },
        false);
  } catch (const TooDeep&) {
    throw UsageError(source + ": nests deeper than " + std::to_string(kMaxJsonDepth) +
                     " levels; no moeval report or bench file does");
  }
}

}  // namespace moeval::cli
