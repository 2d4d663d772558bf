// Whether two paths name one file, or one lies inside the other, before either need exist: the
// report paths (--out, --json, report merge's directories) are compared this way before anything
// is written, however they are spelt (relative or absolute, "..", "//", a trailing separator, a
// symlink).
#pragma once

#include <filesystem>

namespace moeval::cli {

// `p` absolute and lexically normal, the symlinks of its existing part resolved, without a
// trailing separator. Unlike weakly_canonical alone, a wholly non-existent relative path is made
// absolute and normalised too ("./r/../r/x" and "$PWD/r/x" resolve alike).
std::filesystem::path resolved(const std::filesystem::path& p);

// Whether `inner` is `outer` or lies inside it, both resolved.
bool is_within(const std::filesystem::path& inner, const std::filesystem::path& outer);

// Whether `a` and `b` name the same file, both resolved.
bool same_path(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace moeval::cli
