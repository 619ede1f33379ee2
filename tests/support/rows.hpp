// Measurement rows for tests that judge or model results without running
// anything: one place that says what a plausible host-MPI row looks like.
#pragma once

#include <cstdint>
#include <string>

#include "fabricbench/core/record.hpp"

namespace fb::test {

// A 20-iteration float row of the mpi backend over shared memory: median and
// mean `median_us`, min at -spread, p99 and max at +spread, stddev
// median x spread / 2; algbw and busbw bytes / median.
Measurement measurement_row(const std::string& op, const std::string& scope, int nranks, std::uint64_t bytes,
                            double median_us, double spread = 0);

}  // namespace fb::test
