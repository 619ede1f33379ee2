#include "fabricbench/storage/signals.hpp"

#include <poll.h>

#include <cerrno>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/storage/workspace.hpp"

namespace fb::storage {
namespace {

// The thread: waits for a signal (or a wake() = stop), cleans, dies of it.
void wait_for_signal(const SignalSubscription& signals) {
  while (true) {
    pollfd p{signals.fd(), POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) return;
    if (!(p.revents & POLLIN)) continue;
    const int sig = signals.take();
    if (sig == 0) return;
    clean_all_workspaces();
    die_of(sig);
  }
}

}  // namespace

SignalCleanup::SignalCleanup() {
  if (signals_.fd() < 0) throw RunError("storage: cannot make the signal pipe");
  thread_ = std::thread(wait_for_signal, std::cref(signals_));
}

SignalCleanup::~SignalCleanup() {
  signals_.wake();
  thread_.join();
}

}  // namespace fb::storage
