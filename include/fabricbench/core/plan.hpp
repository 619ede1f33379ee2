// What a `run` measures: the parsed options, identical on every rank.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/types.hpp"

namespace fb {

struct RunOptions {
  SizeGrid grid;
  std::vector<Op> ops{default_ops().begin(), default_ops().end()};
  Dtype dtype = Dtype::float32;
  RedOp redop = RedOp::sum;
  int root = 0;
  std::string backend = "mpi";
  std::vector<Scope> scopes{Scope::global};
  int iters = 20;                  // -n: timed iterations (the minimum with a time budget)
  int warmup = 5;                  // -w
  double time_budget_s = 0;        // seconds per measurement; 0 = exactly `iters`
  bool check = false;              // -c: one verified iteration after the timed ones
  bool check_every = false;        // --check all: verify every timed iteration instead (implies check)
  double duration_s = 0;           // --duration: repeat the sweep until this is spent (burn-in); 0 = once
  double timeout_s = -1;           // --timeout: watchdog limit per op; < 0 automatic, 0 = no watchdog
  std::vector<std::string> inject; // --inject: test-only faults (src/backends/fault), as given
  bool out_of_place = true;
  bool in_place = true;
  int peer_a = 0;                  // point-to-point ops: the pair, as ranks of the scope
  int peer_b = 1;
  int window = 64;                 // messages in flight per bandwidth iteration
  bool per_rank_times = false;     // record each rank's mean time per row (rank_mean_us)
  // GPU backends only (others refuse them in Backend::setup):
  int device = -1;                 // CUDA device of every rank; -1 = the rank's local index on its node
  bool graph = false;              // capture each batch of timed iterations in a CUDA graph and replay it
};

// The options as a JSON object for the run header.
nlohmann::ordered_json to_json(const RunOptions& options);


// Stop rule of a measurement with a time budget: run at least `iters`, stop
// early once the median moves by under this fraction between batches.
inline constexpr double kStableMedianFraction = 0.01;
// Upper bound on timed iterations with a time budget, as a multiple of `iters`.
inline constexpr int kMaxItersFactor = 50;

}  // namespace fb
