// The watchdog's own process. Open MPI turns its locks on in every call at
// any thread level above MPI_THREAD_SINGLE (docs/figures.md), so a rank that
// ran the watchdog's loop on a thread of its own paid for it in every small
// message. Instead each rank forks, before MPI_Init, a watch process that
// runs the loop (watchdog.hpp): the rank publishes its progress to a board in
// memory the two share, and the watch process reads it, talks to the other
// ranks' watch processes and judges, as the thread did.
//
// What must act inside the rank when the run ends (close the record on rank
// 0, abort the backend group, leave with the exit code, die of a signal) is
// asked of a closer thread in the rank that sleeps in a read until then: while
// the rank measures, only its main thread executes, which is what
// MPI_THREAD_SINGLE promises MPI. The watch process dies with its rank
// (PR_SET_PDEATHSIG), and stops while its rank is stopped, as the thread did.
#pragma once

#include <sys/types.h>

namespace fb {

class ProgressBoard;

class WatchHost {
 public:
  // Before MPI_Init, in a process with no thread of its own yet: forks the
  // watch process. False (nothing started) when it cannot; the watchdog then
  // runs on a thread of the rank, and MPI must give MPI_THREAD_FUNNELED.
  static bool start() noexcept;
  // The host start() made, null when none.
  static WatchHost* get() noexcept;

  // The board the rank publishes to and its watch process reads.
  ProgressBoard& board() const { return *board_; }
  int requests_fd() const { return requests_; }  // the rank's end: requests and their answers
  int hand_fd() const { return hand_; }          // the rank's end: what the watch process asks of the rank
  pid_t pid() const { return pid_; }

  // Ends the watch process (closing its request socket) and reaps it.
  ~WatchHost();
  WatchHost(const WatchHost&) = delete;
  WatchHost& operator=(const WatchHost&) = delete;

 private:
  WatchHost() = default;
  ProgressBoard* board_ = nullptr;
  int requests_ = -1;
  int hand_ = -1;
  pid_t pid_ = -1;
};

}  // namespace fb
