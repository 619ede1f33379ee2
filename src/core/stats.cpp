#include "fabricbench/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
  if (const CiRanks ci = median_ci_ranks(n); ci.lo > 0) {
    s.ci_low_us = v[ci.lo - 1];
    s.ci_high_us = v[ci.hi - 1];
  }
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

double upper_median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

CiRanks median_ci_ranks(std::size_t n) {
  constexpr double kTail = 0.025;  // each side of a 95% interval
  if (n < 6) return {};
  std::size_t lo = 0;
  if (n <= kExactCiSamples) {
    // P(X <= k) for X ~ Binomial(n, 1/2), summed in order while it stays in the tail.
    const double nd = static_cast<double>(n);
    const double log_all = std::lgamma(nd + 1) - nd * std::log(2.0);
    double below = 0;
    while (lo < n) {
      const double k = static_cast<double>(lo);
      const double p = std::exp(log_all - std::lgamma(k + 1) - std::lgamma(nd - k + 1));
      if (below + p > kTail) break;
      below += p;
      ++lo;
    }
  } else {
    constexpr double kZ = 1.959963984540054;  // standard normal 97.5% quantile
    const double nd = static_cast<double>(n);
    lo = static_cast<std::size_t>(std::floor(nd / 2 - kZ * std::sqrt(nd) / 2 + 0.5));
  }
  if (lo == 0) return {};
  return {lo, n + 1 - lo};
}

double median_ci_fraction(std::span<const double> sorted) {
  const std::size_t n = sorted.size();
  if (n == 0) return std::numeric_limits<double>::infinity();
  return median_ci_fraction(sorted, n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]));
}

double median_ci_fraction(std::span<const double> sorted, double median) {
  const CiRanks ci = median_ci_ranks(sorted.size());
  if (ci.lo == 0 || !(median > 0)) return std::numeric_limits<double>::infinity();
  return std::max(median - sorted[ci.lo - 1], sorted[ci.hi - 1] - median) / median;
}

}  // namespace fb
