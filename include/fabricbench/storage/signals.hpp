// Files removed when a signal ends the run. With the hang watchdog on, its
// loop takes SIGTERM, SIGINT and SIGHUP (core/ending_signals.hpp: the newest
// subscription has them) and calls the board's abort hook, which the
// storage command sets to clean_all_workspaces; without it (--timeout 0),
// this subscription has them: a thread of its own removes every Workspace's
// files and the process then dies of the signal as if it had not been
// caught.
#pragma once

#include <thread>

#include "fabricbench/core/ending_signals.hpp"

namespace fb::storage {

class SignalCleanup {
 public:
  SignalCleanup();  // throws RunError when the signals cannot be subscribed to
  ~SignalCleanup();
  SignalCleanup(const SignalCleanup&) = delete;
  SignalCleanup& operator=(const SignalCleanup&) = delete;

 private:
  SignalSubscription signals_;
  std::thread thread_;
};

}  // namespace fb::storage
