// Ctrl-C during `moeval check` (and `moeval golden --update`): the first SIGINT asks the run to
// stop once the jobs in flight finish, so the report (marked interrupted) is still written, and
// the process then ends by SIGINT as a shell expects (end_by_signal); a second Ctrl-C ends it at
// once through the handler installed before (golden's, which removes temp files and re-raises).
// SIGTERM is left alone: a terminated run keeps the lines of results.jsonl it had written.
#pragma once

#include <atomic>

namespace moeval::cli {

class StopOnSignal {
 public:
  // Installs the handlers; `message` (a string literal: the handler writes it) is printed on
  // stderr at the first signal.
  explicit StopOnSignal(
      const char* message = "\nmoeval: stopping after the checks in flight (again to stop now); the report is written\n");
  ~StopOnSignal();  // puts the previous handlers back
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  const std::atomic<bool>& requested() const;
  // After the report is written: restores the default action and re-raises SIGINT, so the exit
  // status says "interrupted" (does not return).
  [[noreturn]] void end_by_signal();
};

}  // namespace moeval::cli
