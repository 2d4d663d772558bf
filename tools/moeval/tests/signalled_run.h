// Test support: the moeval CLI as a child process whose stdout is a pipe, sent a signal once it has
// printed a number of result lines — how Ctrl-C or a scheduler's kill meets a run whose output
// goes to a pipe (line-buffered output, partial reports, no temp files left behind).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace moeval::cli::test_support {

struct SignalledRun {
  bool started = false;  // the pipe and the fork worked
  int results = 0;       // result lines (PASS/FAIL) read before the signal was sent
  int status = 0;        // the child's wait status
  std::string output;    // everything it printed, before and after the signal
};

// A result line of `moeval check`.
inline bool is_check_result(const std::string& line) { return line.rfind("PASS", 0) == 0 || line.rfind("FAIL", 0) == 0; }

// Runs `binary args...`, reads its stdout until `results_before_signal` result lines (lines for
// which `is_result` holds) arrived (or it ended), sends `signal_number`, waits for it and reads
// what it printed after the signal.
inline SignalledRun run_and_signal(const char* binary, const std::vector<std::string>& args, int results_before_signal,
                                   int signal_number, bool (*is_result)(const std::string&) = is_check_result) {
  SignalledRun r;
  std::vector<char*> argv{const_cast<char*>("moeval")};  // built before fork: the child only execs
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) return r;
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return r;
  }
  if (child == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(binary, argv.data());
    ::_exit(127);
  }
  r.started = true;
  ::close(fds[1]);
  std::string line;
  char c;
  while (r.results < results_before_signal && ::read(fds[0], &c, 1) == 1) {
    r.output += c;
    if (c != '\n') {
      line += c;
      continue;
    }
    if (is_result(line)) ++r.results;
    line.clear();
  }
  ::kill(child, signal_number);
  ::waitpid(child, &r.status, 0);
  while (::read(fds[0], &c, 1) == 1) r.output += c;
  ::close(fds[0]);
  return r;
}

}  // namespace moeval::cli::test_support
