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

// While alive, the path is removed if the process is ended by SIGINT, SIGTERM or SIGHUP (once
// install_temp_cleanup() ran): an interrupted writer leaves no "<file>.tmp.<pid>" behind. Only a
// SIGKILL or a crash can leave one; remove_stale_temps() clears those on the next update.
class TempFileRegistration {
 public:
  explicit TempFileRegistration(const std::filesystem::path& path);
  ~TempFileRegistration();
  TempFileRegistration(const TempFileRegistration&) = delete;
  TempFileRegistration& operator=(const TempFileRegistration&) = delete;

 private:
  int slot_ = -1;  // -1: no free slot (more than a handful of temp files at once); not cleaned on signals
};

// Installs the SIGINT/SIGTERM/SIGHUP handlers that remove registered temp files and then end the
// process with the same signal (so the exit status still says "killed by SIGINT"). Idempotent.
void install_temp_cleanup();

// Removes "<target>.tmp.<pid>" files left by a process that was killed mid-write (its pid no longer
// runs); a live writer's temp file is left alone. Returns how many were removed.
int remove_stale_temps(const std::filesystem::path& target);

}  // namespace moeval::golden
