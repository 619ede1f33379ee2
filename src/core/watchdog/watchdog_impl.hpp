// Internals of the watchdog (see fabricbench/core/watchdog.hpp): what one
// rank's watchdog is given (Config: no MPI in it, so tests and the scale
// simulation run the real loops without a launcher), how the engine's
// thread talks to the watchdog's thread (Control), the loops (rank 0:
// monitor.cpp; node leaders and the other ranks: relay.cpp), signals and how
// a rank leaves (ending.cpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "channel.hpp"
#include "fabricbench/core/ending_signals.hpp"
#include "fabricbench/core/watchdog.hpp"
#include "tree.hpp"

namespace fb {

double monotonic_s();

// The active backend group aborted and waited for, before a rank that ends
// the job tells the ranks below it to stop: they exit at once, non-zero, and
// mpirun then kills this rank, which would lose its abort if it came after.
// leave_job and die_of_signal abort again, finding nothing left to abort.
void abort_before_stopping_others(ProgressBoard* board);
// How a rank leaves an aborted run: the active backend group aborted, then
// _exit(exit_code) (see ending.cpp for why not MPI_Abort).
[[noreturn]] void leave_job(ProgressBoard* board, int exit_code);
// How a rank dies of a signal that ended the run: the active backend group
// aborted, then the signal's default action (die_of).
[[noreturn]] void die_of_signal(ProgressBoard* board, int signal);

namespace watch {

// What acts inside the rank when its run ends: the rank's own process here
// (null RankSide: the functions above); from a watch process (host.cpp), a
// request to the rank's closer thread, which calls the same functions there.
class RankSide {
 public:
  virtual ~RankSide() = default;
  virtual void abort_group() = 0;                      // ProgressBoard::abort_active_group
  virtual void abort_before_stopping_others() = 0;     // fb::abort_before_stopping_others
  [[noreturn]] virtual void leave(int exit_code) = 0;  // fb::leave_job
  [[noreturn]] virtual void die(int signal) = 0;       // fb::die_of_signal
};

// This rank's own view of its progress: when did (step, iteration) last move?
class StallClock {
 public:
  StateReport sample(const ProgressBoard& board, const TimeoutPolicy& policy, double now_s);
  // The thread was not running (a suspended job): start counting again.
  void restart(double now_s) { since_s_ = now_s; }

 private:
  ProgressSnapshot last_;
  double since_s_ = -1;
};

// What one rank's watchdog works with.
struct Config {
  int rank = 0;
  std::vector<int> rank_node;           // node of every rank
  std::vector<std::string> node_hosts;  // host of every node
  TimeoutPolicy policy;
  ProgressBoard* board = nullptr;
  Watchdog::OnEnd on_end;  // rank 0: close the record (no MPI)
  // How this rank leaves a job that ends early; leave_job unless a test
  // wants the thread back. The loop ends after it returns.
  std::function<void(int exit_code)> leave;
  std::function<double()> clock = monotonic_s;
  std::uint64_t token = 0;
  RankSide* side = nullptr;  // null: this process is the rank
  // The rank's ending signals as one byte each (a watch process: the rank's
  // SignalSubscription, passed over); -1: the loop subscribes itself.
  int signal_fd = -1;
  // The rank is stopped (SIGSTOP, a suspended job): the loop stops with it,
  // as a thread of the rank would (a watch process); unset: never.
  std::function<bool()> rank_stopped;

  // What acts inside the rank (see RankSide).
  void abort_group() const;
  void abort_before_stopping_others() const;
  [[noreturn]] void leave_job(int exit_code) const;
  [[noreturn]] void die_of_signal(int signal) const;
};

// One request from the engine's thread (or the set-up) to the watchdog's thread.
struct Request {
  enum Kind { start, attach, finish, fail, cancel } kind = start;
  std::string what;                     // fail
  std::optional<Connection> uplink;     // attach: the connection to this rank's parent
};

// The engine's thread and the watchdog's: requests one way (woken through
// a pipe the loop polls), the set-up's progress the other way.
class Control {
 public:
  Control();
  ~Control();
  Control(const Control&) = delete;
  Control& operator=(const Control&) = delete;

  void post(Request r);
  std::vector<Request> take();
  int wake_fd() const { return wake_read_; }

  // The watchdog's thread: children still expected, or why they cannot all come.
  void report_setup(int missing, const std::string& error);
  // Waits until every child joined, a set-up error, or `deadline_s` (monotonic).
  // Returns the error ("" when every child joined, or the wait ran out:
  // then the children that did not come say why).
  [[nodiscard]] std::string wait_setup(double deadline_s);

 private:
  int wake_read_ = -1;
  int wake_write_ = -1;
  std::mutex mutex_;
  std::deque<Request> requests_;
  std::condition_variable setup_cv_;
  int missing_ = -1;
  std::string setup_error_;
};

// A RunEnd as text and back, for the watch process's request that the rank
// close its record (host.cpp); report.cpp.
std::string run_end_text(const RunEnd& end);
RunEnd run_end_from_text(const std::string& text);

// The loop a rank's watchdog thread runs; returns when the run is over for
// this rank (or Config::leave returned).
void run_monitor(const Config& config, Control& control, std::vector<Fd> tcp_listeners, Fd local_listener);
void run_relay(const Config& config, Control& control, Fd local_listener);

}  // namespace watch

}  // namespace fb
