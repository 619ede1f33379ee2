// Order statistics of per-iteration times.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace fb {

struct TimeStats {
  std::size_t iterations = 0;
  double min_us = 0;
  double median_us = 0;
  double mean_us = 0;
  double p99_us = 0;  // nearest-rank 99th percentile
  double max_us = 0;
  double stddev_us = 0;  // sample standard deviation (n-1)
  // 95% distribution-free confidence interval of the median (median_ci_ranks);
  // both 0 when there are too few iterations for one (fewer than 6).
  double ci_low_us = 0;
  double ci_high_us = 0;
  // Independent timings behind the iterations (Timing::sample_us); 0 = one per iteration.
  std::size_t samples = 0;
  double cv() const { return mean_us > 0 ? stddev_us / mean_us : 0.0; }
};

// Summary of `times_us`; all zeros for an empty input.
TimeStats summarize(std::span<const double> times_us);

// Median alone (no copy kept).
double median_of(std::span<const double> times_us);

// The upper of the two middle values for an even count (a value at least
// half of them reach: a figure some link or node actually measured, as the
// pair matrix's medians report); 0 when empty.
double upper_median(std::vector<double> values);

// The 1-based ranks of the order statistics that bound a 95% confidence
// interval of the median of n samples, [x(lo), x(hi)] with hi = n + 1 - lo:
// for any continuous distribution the number of samples below the median is
// Binomial(n, 1/2), so lo is the largest rank with P(X <= lo - 1) <= 2.5%.
// Exact up to kExactCiSamples, the normal approximation (with continuity
// correction) above. {0, 0} when n < 6: no interval has 95% coverage.
struct CiRanks {
  std::size_t lo = 0;
  std::size_t hi = 0;
};
inline constexpr std::size_t kExactCiSamples = 1000;
CiRanks median_ci_ranks(std::size_t n);

// Of `sorted` (ascending): the larger distance from the median to either end
// of its 95% interval, as a fraction of the median; infinity when there is no
// interval (fewer than 6 samples) or the median is not above 0.
double median_ci_fraction(std::span<const double> sorted);
// The same interval's reach from `median` (the figure a row reports), as a
// fraction of it: where iterations were timed in groups (timing_groups.hpp),
// the interval is over the groups and the row's median over the iterations,
// and a stop on the interval must leave the recorded one within the target.
double median_ci_fraction(std::span<const double> sorted, double median);

}  // namespace fb
