// Ctrl-C during `moeval check`: the first SIGINT asks the run to stop once the jobs in flight
// finish, so the report (marked interrupted) is still written, and the process then ends by
// SIGINT as a shell expects (end_by_signal); a second Ctrl-C ends it at once through the handler
// installed before (golden's, which removes temp files and re-raises). SIGTERM is left alone: a
// terminated run keeps the lines of results.jsonl it had written.
#pragma once

#include <atomic>

namespace moeval::cli {

class StopOnSignal {
 public:
  StopOnSignal();   // installs the handlers
  ~StopOnSignal();  // puts the previous handlers back
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  const std::atomic<bool>& requested() const;
  // After the report is written: restores the default action and re-raises SIGINT, so the exit
  // status says "interrupted" (does not return).
  [[noreturn]] void end_by_signal();
};

}  // namespace moeval::cli
