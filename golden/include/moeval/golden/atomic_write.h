// Atomic replacement of a file: write a temp file in the same directory, fsync, rename.
//
// rename(2) within one directory is atomic, so a reader (or a crash) sees either the old file or
// the complete new one, never a half-written golden file.
#pragma once

#include <filesystem>
#include <functional>

namespace moeval::golden {

// Temp path used while `target` is rewritten by this process: "<target>.tmp.<pid>" beside it.
std::filesystem::path temp_path_for(const std::filesystem::path& target);

// Calls write(temp) and, when it returns, makes the temp file durable and renames it onto `target`.
// When write throws, the temp file is removed, `target` is untouched, and the exception propagates.
// Failures of the file system itself throw GoldenError naming the file.
void replace_atomically(const std::filesystem::path& target,
                        const std::function<void(const std::filesystem::path& temp)>& write);

// Removes "<target>.tmp.<pid>" files left by a process that was killed mid-write (its pid no longer
// runs); a live writer's temp file is left alone. Returns how many were removed.
int remove_stale_temps(const std::filesystem::path& target);

}  // namespace moeval::golden
