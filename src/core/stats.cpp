#include "fabricbench/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace fb {
namespace {

double sorted_median(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

TimeStats summarize(std::span<const double> times_us) {
  TimeStats s;
  if (times_us.empty()) return s;
  std::vector<double> v(times_us.begin(), times_us.end());
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.iterations = n;
  s.min_us = v.front();
  s.max_us = v.back();
  s.median_us = sorted_median(v);
  s.mean_us = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  // Nearest rank: the smallest value with at least 99% of the samples at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
  s.p99_us = v[std::max<std::size_t>(rank, 1) - 1];
  if (n > 1) {
    double sq = 0;
    for (double x : v) sq += (x - s.mean_us) * (x - s.mean_us);
    s.stddev_us = std::sqrt(sq / static_cast<double>(n - 1));
  }
  return s;
}

double median_of(std::span<const double> times_us) {
  if (times_us.empty()) return 0.0;
  std::vector<double> v(times_us.begin(), times_us.end());
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  const double upper = *mid;
  const double lower = *std::max_element(v.begin(), mid);
  return 0.5 * (lower + upper);
}

}  // namespace fb
