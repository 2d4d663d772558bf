// Whole text files of the reports: read with the system's reason when they cannot be, written in
// full (short writes and EINTR retried, a write that takes no byte is a full disk), and replaced
// atomically (a temp file beside the target, written, fsynced, renamed) so that a full disk or a
// kill leaves the old file or the new one, never a truncated one, and no temp file. This is the
// one write loop and the one replacement path of tools/moeval (golden/ has its own for HDF5).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace moeval::golden {
class TempFileRegistration;
}

namespace moeval::cli {

// The largest file read_text_file reads (a results.jsonl of the largest sweep is a few MiB).
inline constexpr std::uint64_t kMaxTextFileBytes = std::uint64_t(1) << 30;

// The file's bytes. Throws std::runtime_error with the reason alone ("Is a directory",
// "Permission denied", "No such file or directory", "is a FIFO, not a regular file", "is <n>
// bytes; … up to 1024 MiB"); the caller names the file and its role. Only regular files are read.
std::string read_text_file(const std::filesystem::path& path);
// Its first line, without the newline (the whole file where it has none); reads no further, and
// no more than kMaxTextFileBytes of a file without a newline.
std::string read_first_line(const std::filesystem::path& path);

// All of `text` into `fd`. Throws std::runtime_error with the system's reason alone.
void write_all(int fd, const std::string& text);

struct ReplaceOptions {
  // Permission bits of the new file. None: the creation mode 0644 less the umask. ReportFile gives
  // the replaced file's own, so a replacement keeps them, and 0644 for a file it creates (its
  // default, which then ignores the umask, as --json always did).
  std::optional<unsigned> mode;
  // fsync the file before the rename and its directory after. A rewrite that a later one
  // supersedes (--json after each result) need not wait for the disk.
  bool durable = true;
  // First remove the "<target>.tmp.<pid>" files of writers that no longer run (a SIGKILL leaves
  // one). ReportFile did so when it checked its path, and spares its per-result rewrites the scan.
  bool remove_stale_temps = true;
};

// A new version of `target` in the making: "<target>.tmp.<pid>" beside it, removed on
// SIGINT/SIGTERM/SIGHUP and by the destructor unless committed; until commit() `target` is as it
// was. Every method throws std::runtime_error with the system's reason alone ("No space left on
// device"), the temp file then still removed by the destructor.
class PendingReplacement {
 public:
  explicit PendingReplacement(std::filesystem::path target, const ReplaceOptions& options = {});
  ~PendingReplacement();
  PendingReplacement(const PendingReplacement&) = delete;
  PendingReplacement& operator=(const PendingReplacement&) = delete;

  void write(const std::string& text);
  // The text on disk (when durable): a failure the disk reports late (NFS, delayed allocation)
  // comes before the caller changes anything else.
  void sync();
  // Renames the temp file onto the target and closes it (a failed close is NFS's failed write).
  void commit();
  // The same, but the new file stays open for appending: the caller owns the descriptor.
  int commit_keeping_open();

 private:
  void rename_into_place();

  std::filesystem::path target_, temp_;
  ReplaceOptions options_;
  int fd_ = -1;
  bool synced_ = false, committed_ = false;
  std::unique_ptr<golden::TempFileRegistration> registration_;  // the temp file's removal on a signal
};

// Replaces `target` by `text` (PendingReplacement written and committed). Throws
// std::runtime_error with the system's reason alone; `target` is then as it was.
void write_text_file_atomically(const std::filesystem::path& target, const std::string& text,
                                const ReplaceOptions& options = {});

}  // namespace moeval::cli
