// Files removed when a signal ends the run. With the hang watchdog on, its
// thread handles SIGTERM, SIGINT and SIGHUP and calls the board's abort hook
// before the process goes (abort_hook()); without it (--timeout 0), this
// handler does: the signal becomes a byte on a pipe (all a handler may
// safely do), a thread of its own removes every Workspace's files and the
// process then dies of the signal as if it had not been caught.
#pragma once

#include <memory>
#include <thread>

namespace fb {
class BackendGroup;
}

namespace fb::storage {

class SignalCleanup {
 public:
  SignalCleanup();   // installs the handlers (installed before the watchdog's, which keep them as the previous ones)
  ~SignalCleanup();  // restores the previous handlers
  SignalCleanup(const SignalCleanup&) = delete;
  SignalCleanup& operator=(const SignalCleanup&) = delete;

 private:
  std::thread thread_;
};

// What the watchdog calls (ProgressBoard::abort_active_group) on every way it
// ends a run: removes every Workspace's files. Set it as the board's active
// group for the whole measurement.
std::unique_ptr<BackendGroup> abort_hook();

}  // namespace fb::storage
