#include "moeval/golden/schema.h"

#include <array>
#include <cstdio>
#include <ctime>
#include <string>

namespace moeval::golden {
namespace {

// Asks git at generation time (the configure-time commit goes stale as soon as someone commits
// without reconfiguring); falls back to the commit CMake saw, then to "unknown".
std::string source_commit() {
  const std::string command = std::string("git -C '") + MOEVAL_SOURCE_DIR + "' rev-parse HEAD 2>/dev/null";
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 128> buffer{};
    while (std::fgets(buffer.data(), int(buffer.size()), pipe)) out += buffer.data();
    if (pclose(pipe) != 0) out.clear();
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.size() == 40) return out;
  const std::string configured = MOEVAL_CONFIGURE_COMMIT;
  return configured.empty() ? "unknown" : configured;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text.data();
}

}  // namespace

Provenance current_provenance() {
  Provenance p;
  p.git_commit = source_commit();
  p.date = utc_now();
  return p;
}

}  // namespace moeval::golden
