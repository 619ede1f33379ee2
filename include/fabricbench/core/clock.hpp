// The engine's clock: monotonic microseconds, shared by the engine, the
// watchdog and the backends (one clock, so their times compare).
#pragma once

namespace fb {

double now_us();

}  // namespace fb
