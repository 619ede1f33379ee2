#include "loop.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace fb::watch {

double own_gap_s(const TimeoutPolicy& policy) { return std::clamp(policy.silence_s() / 3, 0.5, 1.0); }

void Cadence::before_poll() const {
  // Checked once a wake-up (a read of /proc): the rank's stop is seen within a tick.
  while (stopped_ && stopped_()) std::this_thread::sleep_for(std::chrono::milliseconds(kTickMs / 2));
  if (last_s_ < 0) return;
  const double left = last_s_ + kMinWakeS - clock_();
  if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
}

double Cadence::after_poll(double& away_s) {
  const double now = clock_();
  // Poll sleeps at most kTickMs; what exceeds that by far was not sleep.
  away_s = last_s_ >= 0 && now - last_s_ > kTickMs * 1e-3 + gap_s_ ? now - last_s_ : 0;
  last_s_ = now;
  return now;
}

}  // namespace fb::watch
