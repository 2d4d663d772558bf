// The one exit-code scheme of every `moeval` subcommand (docs/errors.md lists the messages).
//
//   0  pass: everything that ran passed, and everything that was required ran
//   1  a check failed: a kernel disagrees with its reference, a golden file differs, devices disagree
//   2  usage or input/output error: bad arguments, an unreadable input file, an unwritable report,
//      a full disk; nothing was judged (or the judgement could not be recorded)
//   3  nothing could run: no usable GPU where one is needed (sweep, bench, check --repro,
//      check --require-gpu), or no device this build's architectures can run on
//
// When several apply, the highest-priority one wins: 2, then 1, then 3 (a found failure is news
// even on a run that also missed its GPU tier).
#pragma once

#include <stdexcept>

namespace moeval::cli {

enum ExitCode : int { kPass = 0, kCheckFailed = 1, kUsageError = 2, kNothingRan = 3 };

// Combines two outcomes by the priority above.
constexpr int worse(int a, int b) {
  auto rank = [](int c) { return c == kUsageError ? 3 : c == kCheckFailed ? 2 : c == kNothingRan ? 1 : 0; };
  return rank(a) >= rank(b) ? a : b;
}

// Bad arguments or input: exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Nothing that was asked for could run here (no usable device): exit 3.
class NothingRan : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace moeval::cli
