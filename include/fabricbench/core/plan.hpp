// What a `run` measures: the parsed options, identical on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/json_value.hpp"
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
  int iters = 20;                  // -n: timed iterations (the minimum with an adaptive stop)
  // Adaptive stop: the fewest timed iterations a cap (bytes, time) may end a
  // size at when that is fewer than `iters`; 0 = `iters` (a -n that was
  // given is never cut short). `run` without -n: kMinCappedIters.
  int cap_min_iters = 0;
  int warmup = 5;                  // -w
  double time_budget_s = 0;        // seconds per measurement (adaptive stop); 0 = no cap
  // Adaptive stop: the 95% CI of the median within +- this fraction (TimingPlan::median_ci);
  // 0 (and no budget) = exactly `iters`. `run`'s default is kDefaultMedianCi.
  double median_ci = 0;
  bool check = false;              // -c: one verified iteration after the timed ones
  bool check_every = false;        // --check all: verify every timed iteration instead (implies check)
  double duration_s = 0;           // --duration: repeat the sweep until this is spent (burn-in); 0 = once
  double timeout_s = -1;           // --timeout: watchdog limit per op; < 0 automatic, 0 = no watchdog
  std::vector<std::string> inject; // --inject: test-only faults (src/backends/fault), as given
  bool out_of_place = true;
  bool in_place = true;
  // With in_place off: measure in-place an op the backend cannot run
  // out-of-place (MPI_Bcast has one buffer), so that `--placement one`
  // still measures every op once.
  bool in_place_where_out_refused = false;
  int peer_a = 0;                  // point-to-point ops: the pair, as ranks of the scope
  int peer_b = 1;
  int window = 64;                 // messages in flight per bandwidth iteration
  bool per_rank_times = false;     // record each rank's mean time per row (rank_mean_us)
  // GPU backends only (others refuse them in Backend::setup):
  int device = -1;                 // CUDA device of every rank; -1 = the rank's local index on its node
  bool graph = false;              // capture each batch of timed iterations in a CUDA graph and replay it
};

// The options as a JSON object for the run header.
JsonValue to_json(const RunOptions& options);

// The adaptive stop rule (src/core/timing.cpp, docs/run.md "When a size stops").
// `run`'s default target: the 95% confidence interval of the median within +-2%.
inline constexpr double kDefaultMedianCi = 0.02;
// Caps beyond -n, so that a size whose median will not settle still ends:
// independent timings (an iteration timed alone, or a group of short ones,
// timing_groups.hpp: the samples its interval is over), and bytes moved per
// rank by the timed iterations.
inline constexpr int kMaxAdaptiveSamples = 5000;
// And the timed iterations those may span: 5000 groups of 16 host iterations
// (timing_groups.hpp); a CUDA graph's replays, one timing each, end here.
inline constexpr int kMaxAdaptiveIters = 80000;
// The most timed (-n) or warm-up (-w) iterations per size. Each timed
// iteration's time is kept on every rank and summarized (sorted, reduced
// across ranks) when the size ends, local work the watchdog sees no progress
// in: ten million of them took longer than a 1.5 s --timeout and were judged
// a hang. A million keep that under 0.2 s, and a median's interval far
// narrower than the clock's resolution long before.
inline constexpr int kMaxIters = 1'000'000;
// 4 GiB, 64 times the default sweep's largest size: the time cap below ends
// the rows that will not settle. At 64 MiB (the cap until issue 39) rows
// from 512 KiB to 8 MiB stopped after 3-20 ms of timed iterations, their
// intervals 3-170% wide, 41 of the default sweep's 144 rows; at 1 GiB (until
// schema 1.18) rows of 16-64 MiB on shared memory stopped after 16-64
// iterations and 60-170 ms, half the time cap, their intervals up to 14%
// wide: 122-124 of 144 rows within +-2%, 129-130 at 4 GiB, the sweep's wall
// time the same (2 local ranks, docs/run.md "When a size stops").
inline constexpr std::uint64_t kMaxBytesPerSize = std::uint64_t{4} << 30;
// And seconds per size (warm-up included) when no --time-budget is given:
// ranks that share cores (oversubscribed, loaded) give medians that settle
// slowly, if ever; this keeps such a sweep within a second or so per row.
inline constexpr double kDefaultSizeSeconds = 0.25;
// `run` without -n: a cap may end a size after this many timed iterations
// rather than the default -n (10). Six is the fewest whose distribution-free
// 95% interval of the median exists (median_ci_ranks: its first and last
// order statistics, 1 - 2 / 2^6 = 96.9%), so every row still states one. A
// row at 64 MiB moved 640 MiB in its 10 iterations, ten times the bytes cap,
// and rows past Open MPI's cliffs (0.5 s an iteration on 2 local ranks) spent
// 5 s each against a 0.25 s cap: most of a default sweep's wall time.
inline constexpr int kMinCappedIters = 6;
// Warm-up beyond its first iteration moves at most this much per rank
// (adaptive): one iteration at 64 MiB, -w at 12 MiB and below.
inline constexpr std::uint64_t kWarmupBytes = std::uint64_t{64} << 20;

// Sets `o`'s placements from one of the words `run --placement` and a
// profile's `placement:` take (one, both, out, in); false for any other.
[[nodiscard]] bool set_placement(std::string_view word, RunOptions& o);

}  // namespace fb
