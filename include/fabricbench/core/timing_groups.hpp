// How many back-to-back iterations one timing spans, for every backend.
// Plain C++ (no CUDA, no MPI), so the rule is unit-tested on any machine.
//
// Iterations shorter than kMinGroupSpanUs are timed in groups spanning at
// least that, each iteration given its group's mean, for two reasons:
//  - device backends: an event record costs the host about 1.5 us, as much
//    as a small NCCL call itself (issue 3);
//  - host backends: back to back, one rank's iterations are not aligned in
//    time with another's, so a single iteration's time is the rank's phase,
//    not the op's. At 16 B, Open MPI 4.1.4 on 2 local ranks settled in some
//    launches into each rank taking 0.1 us and 1.0 us in turn, one rank
//    out of step with the other: the slowest rank of every iteration index
//    was 1.0 us, where the collective completed every 0.58 us (in other
//    launches the same row was 0.55 us). Over a group the misalignment is
//    at most about one iteration in the group's span.
// Ops whose every iteration ends on a reply (OpDesc::answered: a ping-pong)
// end it in step on both ranks, and the host times them alone.
// The group size comes from the engine's agreed time per iteration
// (IterationTimes::agreed_us: the same on every rank, so every rank groups
// alike), at most `max_group` so a batch still has samples enough for the
// median's interval and reports its spread: kMaxEventGroup for events
// (fewer events is the point), kMaxHostGroup on the host, where a group
// costs nothing but where a short group is a sample the OS's interruptions
// spoil less often (groups of 64 at 0.26 us left 5000 iterations, 84
// groups, at a 2.8% interval).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace fb {

inline constexpr double kMinGroupSpanUs = 50.0;
inline constexpr std::size_t kMaxEventGroup = 64;
inline constexpr std::size_t kMaxHostGroup = 16;

// `agreed_us`: the agreed time per iteration of the op so far (0: none yet).
inline std::size_t timing_group_size(double agreed_us, std::size_t max_group) {
  if (!(agreed_us > 0)) return 1;
  const double wanted = std::ceil(kMinGroupSpanUs / agreed_us);
  return static_cast<std::size_t>(std::clamp(wanted, 1.0, static_cast<double>(std::max<std::size_t>(max_group, 1))));
}

}  // namespace fb
