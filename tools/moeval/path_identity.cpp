#include "path_identity.h"

#include <algorithm>

namespace moeval::cli {

std::filesystem::path resolved(const std::filesystem::path& p) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(p.empty() ? std::filesystem::path(".") : p, ec);
  std::filesystem::path r = std::filesystem::weakly_canonical(absolute, ec);
  if (ec) r = absolute.lexically_normal();  // e.g. a component that is a file: compare as written
  if (!r.has_filename() && r != r.root_path()) r = r.parent_path();
  return r;
}

bool is_within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  const std::filesystem::path a = resolved(inner), b = resolved(outer);
  return std::mismatch(b.begin(), b.end(), a.begin(), a.end()).first == b.end();
}

bool same_path(const std::filesystem::path& a, const std::filesystem::path& b) { return resolved(a) == resolved(b); }

}  // namespace moeval::cli
