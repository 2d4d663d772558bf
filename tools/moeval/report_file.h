// The --json report of check and sweep: its path checked before the run, the report rewritten as
// results arrive (so a killed run leaves the rows it had), and written for good at the end.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace moeval::cli {

class ReportFile {
 public:
  // Checks `path` now and throws UsageError "cannot write the JSON report '<path>': <reason>" when
  // it cannot be written (missing directory, no permission, read-only file system, a directory, a
  // symlink loop...). A regular file, a new file, or a symlink to either is replaced atomically
  // through "<target>.tmp.<pid>" beside the target (a symlink is followed, never replaced); a
  // device, FIFO or socket (/dev/stdout, /dev/null) is opened now and written once, in place, at
  // the end. Empty path: no report, every call does nothing.
  explicit ReportFile(std::string path);
  ~ReportFile();
  ReportFile(const ReportFile&) = delete;
  ReportFile& operator=(const ReportFile&) = delete;

  // The report so far (with "complete": false). Never throws: a failure is printed once to stderr
  // and the final write tries again.
  void progress(const nlohmann::json& report);
  // The whole report; throws std::runtime_error "cannot write the JSON report '<path>': <reason>".
  void finish(const nlohmann::json& report);

 private:
  void replace(const std::string& text, bool durable);

  std::string path_;    // as given
  std::string target_;  // after following symlinks
  int stream_fd_ = -1;  // device/FIFO: opened at construction, written at the end
  unsigned mode_ = 0644;
  bool warned_ = false;
};

}  // namespace moeval::cli
