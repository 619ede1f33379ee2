// Two modes in a row's iteration times: a link that flaps, a path that
// alternates (an ECMP hash collision on RoCE, a bond that fails over), a
// protocol switch that some iterations take. The median and the mean average
// such a row into a figure no iteration had; the row is reported with both
// modes and their shares instead.
//
// The statistic: sort the times and split them at the largest gap between
// neighbours that leaves at least kModesMinShare of the iterations on each
// side. The row is bimodal when
//   (median of the upper part - median of the lower part)
//       >= kModesSeparation x (spread of the lower part + spread of the upper part)
// and the upper median is at least kModesMinRatio times the lower one, and
// each part is a cluster (kModesCoverage below), where
// a part's spread is 1.4826 x its median absolute deviation (the standard
// deviation of a normal sample, robust to a few stragglers), floored at
// kModesSpreadFloor of its median (a perfectly flat part would make any gap
// infinite). Scheduling stragglers on a loaded host are spread over a wide
// range and so never make a tight second mode; a link whose rate alternates
// does. Constants: kModes* below, set on the steady curves of this project's
// tests (the largest separation there: 9.8 on shared memory, 46.8 but 62%
// covered on an emulated 1 Gbit/s link at 64 KiB) against a flapping
// emulated link (56.7, 80% covered); docs/run.md ("Bimodal rows").
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace fb {

struct TwoModes {
  double low_us = 0;      // median of the faster mode
  double high_us = 0;     // median of the slower mode
  double low_share = 0;   // fraction of the iterations in the faster mode
  double separation = 0;  // gap between the medians over the two spreads
  double coverage = 0;    // the smaller of the two parts' fractions within kModesReach spreads of their median
};

// Fewer iterations than this are not judged: a share of 10% is then under 2 iterations.
inline constexpr std::size_t kModesMinIterations = 20;
// The smaller mode's least share: a few stragglers are a tail, not a mode.
inline constexpr double kModesMinShare = 0.20;
// Separation needed, in spreads.
inline constexpr double kModesSeparation = 12.0;
// The slower mode at least this much slower: a link that flaps or a path
// shared by a colliding flow at least halves the rate, while two local ranks
// on this project's loaded 2-core host show two tight speeds 1.5x apart
// (pairs' unidir over shared memory).
inline constexpr double kModesMinRatio = 2.0;
// The least spread a mode has, as a fraction of its median.
inline constexpr double kModesSpreadFloor = 0.01;
// A mode is a cluster: at least kModesCoverage of its part within
// kModesReach spreads of its median. Stragglers scattered over a range
// (which the median absolute deviation ignores when a few of them happen to
// bunch) leave much of their part outside.
inline constexpr double kModesReach = 3.0;
inline constexpr double kModesCoverage = 0.7;

// The best split of `times_us` and its separation, whether or not it is
// bimodal (the calibration reads it); nullopt below kModesMinIterations.
std::optional<TwoModes> split_modes(std::span<const double> times_us);
// The two modes when the times are bimodal by the rule above.
std::optional<TwoModes> find_two_modes(std::span<const double> times_us);
bool is_bimodal(const TwoModes& modes);
// "62% of iterations at 850.2 us, 38% at 8104.0 us (9.5x slower)"
std::string modes_text(const TwoModes& modes);

}  // namespace fb
