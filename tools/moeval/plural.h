// "1 case", "49 cases": counts in messages agree with their noun.
#pragma once

#include <string>

namespace moeval::cli {

inline std::string count_of(long long n, const std::string& noun, const std::string& plural_noun = "") {
  return std::to_string(n) + " " + (n == 1 ? noun : plural_noun.empty() ? noun + "s" : plural_noun);
}

}  // namespace moeval::cli
