// Versioning and provenance of golden files (docs/golden.md, "Schema").
//
// Bump kSchemaVersion when the layout of a file changes (names, types, shapes of datasets or
// attributes): readers refuse other versions with a message that says how to regenerate.
// Bump kGeneratorVersion when the generated numbers change on purpose (a new quantizer, a new
// reference order): the diff then shows which cases moved, and the file records which generator
// wrote it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace moeval::golden {

inline constexpr std::int64_t kSchemaVersion = 1;
inline constexpr const char* kGeneratorVersion = "moeval-golden-1";
// What computed the expected outputs.
inline constexpr const char* kReferenceBackend = "cpu-fp64 (reference/cpu)";

// Root attribute names, shared with golden/python/check_golden.py and docs/golden.md.
namespace root_attr {
inline constexpr const char* schema_version = "schema_version";
inline constexpr const char* generator_version = "generator_version";
inline constexpr const char* git_commit = "git_commit";
inline constexpr const char* date = "date";
inline constexpr const char* reference_backend = "reference_backend";
inline constexpr const char* family = "family";
}  // namespace root_attr

struct Provenance {
  std::int64_t schema_version = kSchemaVersion;
  std::string generator_version = kGeneratorVersion;
  std::string git_commit;  // of the tree that generated the file ("unknown" outside a checkout)
  std::string date;        // UTC, ISO 8601
  std::string reference_backend = kReferenceBackend;
  // Not stored: current_provenance() read git_commit and its -dirty mark from git at run time. A
  // commit CMake saw at configure time may be stale and was never checked for changes.
  bool commit_verified = false;
};

// Provenance for a file written now: this build's versions, the source tree's commit, today's date.
Provenance current_provenance();

// The mark a commit carries when the tree that wrote the file had uncommitted changes.
inline constexpr std::string_view kDirtySuffix = "-dirty";

// The commit ends in kDirtySuffix: fixtures/, reference/ or golden/ had uncommitted changes when the
// file was written, so no commit reproduces it for certain.
bool has_uncommitted_changes(const Provenance& p);

}  // namespace moeval::golden
