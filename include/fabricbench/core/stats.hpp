// Order statistics of per-iteration times.
#pragma once

#include <cstddef>
#include <span>

namespace fb {

struct TimeStats {
  std::size_t iterations = 0;
  double min_us = 0;
  double median_us = 0;
  double mean_us = 0;
  double p99_us = 0;  // nearest-rank 99th percentile
  double max_us = 0;
  double stddev_us = 0;  // sample standard deviation (n-1)
  double cv() const { return mean_us > 0 ? stddev_us / mean_us : 0.0; }
};

// Summary of `times_us`; all zeros for an empty input.
TimeStats summarize(std::span<const double> times_us);

// Median alone (no copy kept): for the stability test between batches.
double median_of(std::span<const double> times_us);

}  // namespace fb
