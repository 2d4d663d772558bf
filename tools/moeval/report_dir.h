// --out DIR: the report files of one run. results.jsonl is written while the run goes — the header
// first, then one line per check as it finishes, each line written whole with one write(2), so a
// killed run keeps every check it finished — and closed with an "end" line. At the end (also after
// Ctrl-C) report.json, results.csv and junit.xml are written atomically (temp file + rename).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <mutex>
#include <string>

#include "run_report.h"

namespace moeval::cli {

// The files of a report directory: results.jsonl, streamed, and the files derived from the run at
// its end (report.html is rendered from them by tools/report/render_report.py). report.json comes
// first of the derived files: load_run prefers it to the lines, so it is the first to go when a new
// run starts (start_report_lines).
inline constexpr const char* kReportDirFiles[] = {"results.jsonl", "report.json", "results.csv", "junit.xml", "report.html"};

class ReportDir {
 public:
  // Creates `dir` and its parents, touching nothing in it; UsageError "cannot write the report
  // directory '<dir>': <why>" when it cannot be.
  static void create(const std::filesystem::path& dir);
  // Whether create(dir) and the files in it could be written, without creating anything: `dir`, or
  // its nearest existing ancestor, must be a writable directory. The same UsageError as create()
  // ("…: Not a directory", "…: Permission denied"). Lets a run refuse a bad --out before a device
  // check that would end it with another exit status (a sweep without a GPU: 3). `what` names the
  // directory in the message ("--repro-dir" for that option's).
  static void check_writable(const std::filesystem::path& dir, const std::string& what = "the report directory");

  // Creates `dir` and starts results.jsonl with the header now (start_report_lines), so an
  // unusable directory is a UsageError before any work: "cannot write the report directory
  // '<dir>': <why>". A start that fails leaves the previous run's files as they were.
  ReportDir(std::filesystem::path dir, nlohmann::json header);
  ~ReportDir();
  ReportDir(const ReportDir&) = delete;
  ReportDir& operator=(const ReportDir&) = delete;

  // One finished check (thread-safe). Never throws: a failed write is reported once on stderr and
  // the final files are still attempted.
  void add(const nlohmann::json& check);
  // Appends the end line and writes report.json, results.csv and junit.xml. Throws
  // std::runtime_error naming the file that could not be written.
  void finish(const nlohmann::json& end);

  const RunReport& report() const { return report_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  void append_line(const std::string& line);  // a whole line (report_line), newline included

  std::filesystem::path dir_;
  RunReport report_;
  int fd_ = -1;
  bool warned_ = false;
  std::mutex mutex_;
};

// report.json, results.csv and junit.xml of `report` in `dir`, each replaced atomically. Throws
// std::runtime_error "cannot write the report '<file>': <the system's reason>".
void write_final_files(const std::filesystem::path& dir, const RunReport& report);

// Puts `lines` (a run's header, or a whole merged report) in place as DIR/results.jsonl, the
// previous run's derived files removed, in the order that keeps the directory describing one run
// at every moment, whatever fails or kills the process:
//   1. the report files are checked: one that is a directory (which neither rename nor unlink can
//      replace) refuses the start before anything changes;
//   2. the new lines are written and synced into "results.jsonl.tmp.<pid>": a full disk fails here;
//   3. the derived files are removed, report.json first: the directory is still the previous run's
//      (its results.jsonl holds all of that run; a kill here leaves just that);
//   4. the temp file is renamed over results.jsonl: the directory is the new run's.
// A failure before 4 removes the temp file. (An unlink in 3 that fails although 1 passed, say
// another user's file in a sticky directory, leaves the previous run's results.jsonl and some of
// its derived files: still that run alone.) Returns the new results.jsonl, open for appending; the
// caller owns the descriptor. Throws std::runtime_error: "<the system's reason> (<doing what>)",
// or "'<file>' is a directory, not a report file; move it away (nothing was changed)".
int start_report_lines(const std::filesystem::path& dir, const std::string& lines);

}  // namespace moeval::cli
