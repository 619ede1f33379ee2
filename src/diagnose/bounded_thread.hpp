// Work that may recurse deeply and run without bound (std::regex matching a
// user's pattern): run on a thread of its own with a large stack and given up
// after a time limit, so a pattern that backtracks catastrophically ends in a
// clear error instead of a hang or a stack overflow.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>

namespace fb::diagnose {

struct WorkTimedOut : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs `work` on a new thread with a `stack_bytes` stack and waits for it.
// Rethrows what `work` throws; throws WorkTimedOut when it has not returned
// within `limit_s`. The thread is then left to end on its own (the process
// exits soon after): `work` must own everything it touches.
void run_bounded(std::function<void()> work, double limit_s, std::size_t stack_bytes);

}  // namespace fb::diagnose
