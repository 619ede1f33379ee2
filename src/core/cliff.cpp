// The first cliff of a bandwidth curve (core/cliff.hpp).
#include "fabricbench/core/cliff.hpp"

#include <algorithm>
#include <vector>

namespace fb {

std::optional<Cliff> find_cliff(std::span<const BandwidthPoint> c) {
  if (c.size() < 2) return std::nullopt;
  // best_from[i]: the best bandwidth from size i to the last, so each candidate edge is one comparison.
  std::vector<double> best_from(c.size());
  best_from.back() = c.back().gbps;
  for (std::size_t i = c.size() - 1; i-- > 0;) best_from[i] = std::max(best_from[i + 1], c[i].gbps);
  const double floor_us =
      std::min_element(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.time_us < b.time_us; })->time_us;
  double best_before = 0;
  for (std::size_t i = 1; i < c.size(); ++i) {
    const double t = c[i - 1].time_us;
    if (t >= kBandwidthRegime * floor_us || t >= kBandwidthRegimeUs) best_before = std::max(best_before, c[i - 1].gbps);
    const bool sharp = c[i - 1].gbps >= kCliffStep * c[i].gbps;
    if (sharp && best_before > 0 && best_from[i] * kCliffFactor < best_before) return Cliff{i, best_before, best_from[i]};
  }
  return std::nullopt;
}

}  // namespace fb
