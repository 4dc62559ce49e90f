#include "tasks/common/stop_signals.h"

#include <signal.h>

#include <atomic>

namespace ts::tasks {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGUSR1};

// Lock-free, so the handler may store to it (a plain int is not enough for
// the trainer's thread to see it).
std::atomic<int> g_received{0};
static_assert(std::atomic<int>::is_always_lock_free);

struct sigaction g_previous[sizeof(kSignals) / sizeof(kSignals[0])];

void on_signal(int signal) {
  int none = 0;
  g_received.compare_exchange_strong(none, signal);
}

}  // namespace

StopSignals::StopSignals() {
  g_received = 0;
  struct sigaction action = {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESETHAND: the next one takes the default action (ends the process).
  // SA_RESTART: reads and writes under way go on rather than fail with EINTR.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &action, &g_previous[i]);
}

StopSignals::~StopSignals() {
  for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

int StopSignals::received() { return g_received.load(); }

}  // namespace ts::tasks
