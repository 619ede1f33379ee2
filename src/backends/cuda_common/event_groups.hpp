// How many back-to-back iterations the stream timer puts between two CUDA
// events. Plain C++ (no CUDA), so the rule is unit-tested on any machine.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace fb::gpu {

// An event record costs the host about 1.5 us, as much as a small NCCL call
// itself, so short iterations are timed in groups spanning at least
// kMinGroupSpanUs and each gets its group's mean; the group size comes from
// the engine's agreed time per iteration (IterationTimes::agreed_us: the same
// on every rank, so every rank groups alike), at most kMaxGroup so a long
// batch still reports its spread.
inline constexpr double kMinGroupSpanUs = 50.0;
inline constexpr std::size_t kMaxGroup = 64;

// `last_mean_us`: the agreed time per iteration of the op so far (0: none yet).
inline std::size_t event_group_size(double last_mean_us) {
  if (!(last_mean_us > 0)) return 1;
  const double wanted = std::ceil(kMinGroupSpanUs / last_mean_us);
  return static_cast<std::size_t>(std::clamp(wanted, 1.0, static_cast<double>(kMaxGroup)));
}

}  // namespace fb::gpu
