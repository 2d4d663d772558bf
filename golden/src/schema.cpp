#include "moeval/golden/schema.h"

#include <array>
#include <cstdio>
#include <ctime>
#include <string>

namespace moeval::golden {
namespace {

// Output of a git command in the source tree; empty when git or the checkout is missing.
std::string git(const std::string& args) {
  const std::string command = std::string("git -C '") + MOEVAL_SOURCE_DIR + "' " + args + " 2>/dev/null";
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 256> buffer{};
    while (std::fgets(buffer.data(), int(buffer.size()), pipe)) out += buffer.data();
    if (pclose(pipe) != 0) out.clear();
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// Asks git at generation time (the configure-time commit goes stale as soon as someone commits
// without reconfiguring); falls back to the commit CMake saw, then to "unknown". "-dirty" says
// that the code which decides the numbers (fixtures, reference, golden) had uncommitted changes.
struct SourceCommit {
  std::string commit;
  bool verified = false;  // from git now, its -dirty mark included
};

SourceCommit source_commit() {
  const std::string head = git("rev-parse HEAD");
  if (head.size() == 40) {
    const bool dirty =
        !git("status --porcelain --untracked-files=no -- fixtures reference golden/src golden/include").empty();
    return {dirty ? head + std::string(kDirtySuffix) : head, true};
  }
  const std::string configured = MOEVAL_CONFIGURE_COMMIT;
  return {configured.empty() ? "unknown" : configured, false};
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

bool has_uncommitted_changes(const Provenance& p) { return p.git_commit.ends_with(kDirtySuffix); }

Provenance current_provenance() {
  Provenance p;
  const SourceCommit source = source_commit();
  p.git_commit = source.commit;
  p.commit_verified = source.verified;
  p.date = utc_now();
  return p;
}

}  // namespace moeval::golden
