// The hang watchdog around a command's measuring part, for every command
// that measures (run, check, pairs, step): one ProgressBoard the engine
// publishes to, the watchdog thread (watchdog.hpp) when the timeout policy asks for one,
// and on rank 0 what that thread needs to close the record if the run ends
// early (hang, lost rank, error on any rank, signal).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/watchdog.hpp"

namespace fb::cli {

class WatchedRun {
 public:
  // Collective. `command` names the messages ("fabricbench check: ...").
  // Throws UsageError alike on every rank when the side channel cannot be
  // set up (see Watchdog).
  WatchedRun(const Comm& world, const NodeMap& nodes, watch::TimeoutPolicy policy, std::string command);
  ~WatchedRun();
  WatchedRun(const WatchedRun&) = delete;
  WatchedRun& operator=(const WatchedRun&) = delete;

  ProgressBoard& board() { return *board_; }
  // Closes the record with a closing summary line: called from the
  // watchdog's thread, so it must be thread-safe, use no MPI and not throw
  // (SinkList::abort and RecordWriter::seal are and do not).
  using CloseRecord = std::function<void(const Summary& summary)>;
  // Rank 0: `open` opens the record (its file, header and first lines), and
  // from then on an early end closes it with a summary saying why. Both under
  // one lock: a signal that arrives while the record is being opened closes
  // it once it is open, never a half-opened or unarmed one.
  void open_record(const std::function<void()>& open, CloseRecord close);
  // Runs the measuring part. Then every rank tells the watchdog it is done
  // (at the same point). An exception on this rank is logged, handed to the
  // watchdog (rank 0 closes the record naming the rank) and ends the job.
  void run(const std::function<void()>& body);
  // Runs `body` as run() does, without saying this rank is done: for what
  // comes before the measurement.
  void guard(const std::function<void()>& body);

 private:
  void close_early(const watch::RunEnd& end) const;

  std::string command_;
  ProgressBoard own_board_;
  ProgressBoard* board_;      // the watch process's shared board when there is one (watch_host.hpp), else own_board_
  mutable std::mutex mutex_;  // open_record() on the main thread, close_early() on the watchdog's
  CloseRecord close_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::unique_ptr<Watchdog> watchdog_;
};

}  // namespace fb::cli
