#include "fabricbench/core/modes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace fb {
namespace modes_detail {  // named: a unity batch shares one translation unit

double median_sorted(std::span<const double> v) {
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// 1.4826 x MAD: a normal sample's standard deviation, unmoved by a few outliers.
double spread(std::span<const double> sorted, double median) {
  std::vector<double> dev;
  dev.reserve(sorted.size());
  for (double x : sorted) dev.push_back(std::abs(x - median));
  std::sort(dev.begin(), dev.end());
  return std::max(1.4826 * median_sorted(dev), kModesSpreadFloor * median);
}

// The fraction of `part` within kModesReach spreads of its median.
double coverage(std::span<const double> part, double median, double spread) {
  const auto near =
      std::count_if(part.begin(), part.end(), [&](double x) { return std::abs(x - median) <= kModesReach * spread; });
  return static_cast<double>(near) / static_cast<double>(part.size());
}

}  // namespace modes_detail

std::optional<TwoModes> split_modes(std::span<const double> times_us) {
  const std::size_t n = times_us.size();
  if (n < kModesMinIterations) return std::nullopt;
  std::vector<double> v(times_us.begin(), times_us.end());
  std::sort(v.begin(), v.end());
  const auto least = static_cast<std::size_t>(std::ceil(kModesMinShare * static_cast<double>(n)));
  std::size_t cut = least;
  for (std::size_t k = least; k + least <= n; ++k)
    if (v[k] - v[k - 1] > v[cut] - v[cut - 1]) cut = k;
  const std::span<const double> low(v.data(), cut), high(v.data() + cut, n - cut);
  TwoModes m;
  m.low_us = modes_detail::median_sorted(low);
  m.high_us = modes_detail::median_sorted(high);
  m.low_share = static_cast<double>(cut) / static_cast<double>(n);
  const double low_spread = modes_detail::spread(low, m.low_us), high_spread = modes_detail::spread(high, m.high_us);
  m.separation = low_spread + high_spread > 0 ? (m.high_us - m.low_us) / (low_spread + high_spread) : 0;
  m.coverage =
      std::min(modes_detail::coverage(low, m.low_us, low_spread), modes_detail::coverage(high, m.high_us, high_spread));
  return m;
}

bool is_bimodal(const TwoModes& m) {
  return m.separation >= kModesSeparation && m.high_us >= kModesMinRatio * m.low_us && m.coverage >= kModesCoverage;
}

std::string modes_text(const TwoModes& m) {
  return fmt::format("{:.0f}% of iterations at {:.1f} us, {:.0f}% at {:.1f} us ({:.1f}x slower)", 100 * m.low_share,
                     m.low_us, 100 * (1 - m.low_share), m.high_us, m.high_us / m.low_us);
}

std::optional<TwoModes> find_two_modes(std::span<const double> times_us) {
  const auto m = split_modes(times_us);
  if (!m || !is_bimodal(*m)) return std::nullopt;
  return m;
}

}  // namespace fb
