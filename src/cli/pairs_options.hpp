// `fabricbench pairs` flags.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "fabricbench/core/json_value.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/pairs.hpp"

namespace fb::cli {

struct PairsFlags {
  std::string size = "16M";
  std::string latency_size = "8";
  int window = 8;
  int iters = 10;
  int warmup = 2;
  double time_budget = 0;
  std::vector<std::string> nodes;
  bool rails = false;
  double threshold = 0.9;
  double expect_gbps = 0;
  std::string backend = "mpi";
  std::string out;
  bool overwrite = false;  // --out may replace an existing file
  bool quiet = false;
  bool verbose = false;
  std::string progress = "auto";
  std::string counters = "/";  // --counters: where error counters are read, or off (fabric_health.hpp)
  std::string timeout = "auto";
  std::vector<std::string> inject;  // test only
};

void add_pairs_flags(CLI::App& app, PairsFlags& flags);

// Validates and converts. `nodes` stays empty: the selection needs the job's
// node map (select_nodes). Throws UsageError naming the flag.
PairsOptions resolve(const PairsFlags& flags);

// The options for the record header.
JsonValue to_json(const PairsFlags& flags, const PairsOptions& options);

Verbosity verbosity(const PairsFlags& flags);

}  // namespace fb::cli
