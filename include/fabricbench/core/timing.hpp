// The timed loop of one measurement, run by every rank of the world in step:
// warm-up, batches of timed iterations, the stop rule, and the reductions
// that turn per-rank times into per-iteration times of the slowest rank.
// Ranks that sit the measurement out pass no op and only take part in the
// (quiet) control collectives.
#pragma once

#include <cstdint>
#include <vector>

#include "fabricbench/backends/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/progress.hpp"

namespace fb {

struct TimingPlan {
  int iters = 20;
  int warmup = 5;
  double budget_s = 0;  // 0 = exactly `iters`
  // --check all: refill the inputs before and verify the outputs after every
  // timed iteration (outside its timed span).
  bool check_every = false;
  // Where the steps and iterations are published for the watchdog; may be null.
  ProgressBoard* board = nullptr;
};

struct Timing {
  // Per iteration: the slowest participating rank's time, per op (iteration
  // time divided by the op's ops_per_iteration). Identical on every rank.
  std::vector<double> iteration_us;
  // Per world rank: mean lateness entering an iteration against the earliest
  // rank, and mean own time per op. Only on rank 0. Ranks that sat out: -1.
  std::vector<double> rank_lag_us;
  std::vector<double> rank_mean_us;
  // check_every: this rank's wrong elements in each timed iteration.
  std::vector<std::int64_t> wrong_per_iteration;
};

// Labels the board (may be null) with the op about to be timed; the
// watchdog's automatic timeout scales with what one iteration moves.
void label_op(ProgressBoard* board, const OpSpec& spec, const PreparedOp& op, int scope);

// `op` is null on ranks that do not participate.
Timing time_op(const Comm& world, PreparedOp* op, const TimingPlan& plan);

// `n` iterations outside the timed loop (warm-up, the check's), through
// run_timed so that the watchdog sees each one issued. Returns the first
// one's time. `agreed_us`: IterationTimes::agreed_us.
double run_untimed(PreparedOp& op, int n, ProgressBoard* board, double agreed_us = 0);

// How many iterations go in each batch between stop decisions.
int batch_size(const TimingPlan& plan, double warmup_iteration_us);
// The stop rule after a batch, on the per-iteration times so far.
bool should_stop(const TimingPlan& plan, const std::vector<double>& iteration_us, double previous_median_us);

}  // namespace fb
