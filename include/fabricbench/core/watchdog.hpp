// The hang watchdog. On every rank, a process of its own (watch_host.hpp;
// where none could be forked, a thread of the rank) watches this rank's
// progress (progress.hpp) and talks over a side channel of its own, set up at the
// start of the run (MPI is used only to broadcast rank 0's address and a
// random token, and to agree on set-up errors), so it still works when the
// MPI or NCCL communicator is wedged. The channel is a tree: each node's
// ranks report to their node leader over a local socket, the leaders to
// rank 0 over TCP, four times a second, and the parents beat back as often
// (see src/core/watchdog/tree.hpp). Rank 0 judges (watch_report.hpp):
//   hang       a rank inside an op has made no progress for the timeout;
//              the report names the ranks that stopped answering, else the
//              ranks furthest behind (stuck), and the ranks waiting on
//              them, with op, scope, size, phase and iteration;
//   rank_lost  a rank's connection closed without a goodbye (killed,
//              crashed; a lost node leader loses its node) or it went
//              silent for the timeout (frozen, host gone);
//   error      a rank hit an error it cannot recover from (fail());
//   killed     SIGTERM/SIGINT/SIGHUP reached a rank (launcher, scheduler).
// Then rank 0 closes the record with a summary saying so (the OnEnd
// callback), tells the other ranks to stop, asks the active backend group to
// abort (BackendGroup::abort), and ends the job (exit 3), or for a signal
// dies of that signal. A rank whose parent falls silent (rank 0 frozen)
// ends the job itself; a watchdog thread that was not running for a while
// (the job suspended) judges nobody for that time.
//
// Cost to the timed loop: nothing but the store of one counter per
// iteration; the watchdog wakes ten times a second and reads it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/watch_report.hpp"

namespace fb {

class Watchdog {
 public:
  // Rank 0 only, from the watchdog's thread: record how the run ended
  // (close the record, print the message). Must not use MPI.
  using OnEnd = std::function<void(const watch::RunEnd&)>;

  // Collective over `world`. Throws UsageError on every rank alike when some
  // rank cannot reach its parent, or a parent cannot hold its children (out
  // of descriptors): the message says what to set.
  Watchdog(const Comm& world, const NodeMap& nodes, watch::TimeoutPolicy policy, ProgressBoard& board, OnEnd on_end);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // This rank's sweep is over. Every rank calls it at the same point; rank 0
  // returns once every rank has said so (a rank stuck before that is still
  // caught), so no rank mistakes the end of the run for a lost rank 0.
  void finish();
  // An error this rank cannot recover from: rank 0 closes the record with it
  // and ends the job. Does not return.
  [[noreturn]] void fail(const std::string& what);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fb
