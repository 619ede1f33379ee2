// What every watchdog loop shares: its cadence, and noticing that its own
// thread was not running (the job suspended: SIGSTOP/SIGCONT, `scontrol
// suspend`; a host stalled), when nobody's silence meanwhile says anything.
#pragma once

#include <functional>

#include "fabricbench/core/watch_report.hpp"

namespace fb::watch {

inline constexpr int kTickMs = 100;             // the longest a loop sleeps in poll
inline constexpr double kReportPeriodS = 0.25;  // states up, heartbeats down
// The least time between two wake-ups: messages from many children are
// handled in batches rather than one wake-up each.
inline constexpr double kMinWakeS = 0.02;

// A gap between two wake-ups this long is this thread's own absence, not
// anyone's silence: far above the tick (a loaded host delays a thread by
// tens of milliseconds), below the timeout.
double own_gap_s(const TimeoutPolicy& policy);

class Cadence {
 public:
  // `stopped`: whether the rank this loop watches from outside is stopped
  // (unset: the loop is the rank's own thread, and stops with it).
  Cadence(std::function<double()> clock, double gap_s, std::function<bool()> stopped = {})
      : clock_(std::move(clock)), gap_s_(gap_s), stopped_(std::move(stopped)) {}
  // Sleeps off what is left of kMinWakeS since the last wake-up, and while
  // the rank is stopped: a time after_poll then counts as this loop's absence.
  void before_poll() const;
  // The time after poll returned; `away_s` > 0 when this thread was gone
  // far longer than it slept (then restart every silence clock).
  double after_poll(double& away_s);

 private:
  std::function<double()> clock_;
  double gap_s_;
  std::function<bool()> stopped_;
  double last_s_ = -1;
};

}  // namespace fb::watch
