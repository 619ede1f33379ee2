// Internals of the watchdog (see fabricbench/core/watchdog.hpp): the state
// one rank keeps, its thread's loops (rank 0: monitor.cpp; others:
// reporter.cpp), signals (signals.cpp) and how a rank leaves (ending.cpp).
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "channel.hpp"
#include "fabricbench/core/watchdog.hpp"

namespace fb {

// This rank's own view of its progress: when did (step, iteration) last move?
class StallClock {
 public:
  watch::StateReport sample(const ProgressBoard& board, const watch::TimeoutPolicy& policy, double now_s);

 private:
  ProgressSnapshot last_;
  double since_s_ = -1;
};

// One end-of-run request from the engine's thread to the watchdog's thread.
struct Request {
  enum Kind { none, finish, fail } kind = none;
  std::string what;
};

struct Watchdog::Impl {
  int rank = 0;
  int size = 1;
  std::vector<std::string> hosts;  // host of every world rank
  watch::TimeoutPolicy policy;
  ProgressBoard* board = nullptr;
  OnEnd on_end;
  StallClock clock;

  // Wakes the thread for a request; the request itself under the mutex.
  int wake_read = -1;
  int wake_write = -1;
  std::mutex request_mutex;
  Request request;

  // Rank 0: the listening socket, the token connections must present, and
  // one connection per rank (index = rank).
  watch::Listener listener;
  std::uint64_t token = 0;
  std::vector<watch::Connection> peers;
  // Other ranks: the connection to rank 0.
  watch::Connection root;

  std::thread thread;
  std::atomic<bool> running{false};

  void post(Request r);
  Request take();
  void run_monitor();   // rank 0's loop
  void run_reporter();  // every other rank's loop
};

// Signals that end a job (SIGTERM, SIGINT, SIGHUP) become bytes on a pipe the
// watchdog's thread polls; the previous handlers come back on uninstall.
int install_signal_pipe();  // the read end
void uninstall_signal_pipe();
// Die of `signal` as if we had not caught it (the launcher sees what it sent).
[[noreturn]] void die_of(int signal);

// How a rank leaves an aborted run: the active backend group aborted, then
// _exit(exit_code) (see ending.cpp for why not MPI_Abort).
[[noreturn]] void leave_job(ProgressBoard* board, int exit_code);

double monotonic_s();

}  // namespace fb
