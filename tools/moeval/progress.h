// What `moeval check` shows while it runs: one line per finished check on stdout (line-buffered,
// so a pipe or a CI log gets each as it happens) and the run's progress — done/total, rate, ETA,
// failures so far — as a status line redrawn on a terminal, or as a plain line every
// `plain_every_s` seconds when stderr is not one.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <string>

namespace moeval::cli {

// "[120/340] 3.1 checks/s, ETA 1m11s, 2 failed" (ETA "?" before the first check).
std::string format_progress(std::size_t done, std::size_t total, double elapsed_s, long failed);

// Where a record's check ran, for its line: "gpu0", "gpu0,1" (a cross-device job's devices) or "cpu".
std::string where_ran(const nlohmann::json& rec);

class Progress {
 public:
  Progress(std::size_t total, bool terminal, double plain_every_s = 10.0);
  // Prints the record's line ("PASS     gpu0 marlin_moe gemm1-…", with the reason below a FAIL) and
  // updates the progress.
  void record(const nlohmann::json& rec);
  // Clears the status line.
  void finish();
  long failed() const { return failed_; }

 private:
  void draw();

  std::size_t total_, done_ = 0;
  long failed_ = 0;
  bool terminal_;
  double plain_every_s_;
  std::chrono::steady_clock::time_point start_, last_plain_;
};

}  // namespace moeval::cli
