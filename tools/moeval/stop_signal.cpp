#include "stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace moeval::cli {
namespace {

std::atomic<bool> g_requested{false};
const char* g_message = "";
struct sigaction g_previous_int {};

void on_signal(int sig) {
  if (g_requested.exchange(true)) {
    // Second signal: no more waiting.
    ::sigaction(sig, &g_previous_int, nullptr);
    ::raise(sig);
    return;
  }
  const ssize_t ignored = ::write(2, g_message, std::strlen(g_message));
  (void)ignored;
}

}  // namespace

StopOnSignal::StopOnSignal(const char* message) {
  g_requested = false;
  g_message = message;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &g_previous_int);
}

StopOnSignal::~StopOnSignal() {
  ::sigaction(SIGINT, &g_previous_int, nullptr);
}

const std::atomic<bool>& StopOnSignal::requested() const { return g_requested; }

void StopOnSignal::end_by_signal() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::raise(SIGINT);
  ::_exit(130);  // not reached: SIGINT's default action ends the process
}

}  // namespace moeval::cli
