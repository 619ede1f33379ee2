// Results rows for the model's tests: built from known alpha and beta, or
// written to a results file the CLI can read.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>  // Results holds JSON lines

#include "fabricbench/core/record.hpp"

namespace fb::test {

// One measurement row with the given median time; min and p99 at +-spread.
Measurement model_row(const std::string& op, const std::string& scope, int nranks, std::uint64_t bytes,
                      double median_us, double spread = 0.05, int groups = 1);

// Rows of an op on a power-of-two grid from `min_bytes` to `max_bytes`
// whose time is alpha + bytes/beta times (1 + noise), noise uniform in
// [-noise, noise] from a fixed seed.
std::vector<Measurement> alpha_beta_rows(const std::string& op, const std::string& scope, int nranks,
                                         double alpha_us, double beta_gbps, double noise, std::uint64_t min_bytes = 8,
                                         std::uint64_t max_bytes = 64ull << 20, int groups = 1);

// Writes a complete results file (run header, rows, summary); `nodes` goes in
// the header.
void write_results(const std::string& path, const std::vector<Measurement>& rows, int nodes = 1);

// A whole text file ("" when unreadable).
std::string read_text(const std::string& path);

Results make_results(const std::vector<Measurement>& rows, int nodes = 1);

}  // namespace fb::test
