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

class ReportDir {
 public:
  // Creates `dir` (and its parents) and starts results.jsonl with the header now, so an unusable
  // directory is a UsageError before any work: "cannot write the report directory '<dir>': <why>".
  // An existing results.jsonl or report.json there is replaced (a report describes one run).
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
  void append_line(const nlohmann::json& line);

  std::filesystem::path dir_;
  RunReport report_;
  int fd_ = -1;
  bool warned_ = false;
  std::mutex mutex_;
};

// report.json, results.csv and junit.xml of `report` in `dir`, each replaced atomically.
void write_final_files(const std::filesystem::path& dir, const RunReport& report);

}  // namespace moeval::cli
