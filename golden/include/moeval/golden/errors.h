// The one exception type for golden files that cannot be read, written or trusted.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace moeval::golden {

// Thrown for a missing, corrupt, truncated or wrong-schema golden file, or a case/dataset that is
// not what the schema promises. The message names the file, the object inside it and what is wrong.
class GoldenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "golden file '<path>'[, <object>]: <what>" — the one message format every golden error uses.
inline GoldenError golden_error(const std::filesystem::path& file, std::string_view object, std::string_view what) {
  std::string message = "golden file '" + file.string() + "'";
  if (!object.empty()) message += ", " + std::string(object);
  message += ": " + std::string(what);
  return GoldenError(message);
}

}  // namespace moeval::golden
