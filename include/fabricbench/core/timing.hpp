// The timed loop of one measurement, run by every rank of the world in step:
// warm-up, batches of timed iterations, the stop rule, and the reductions
// that turn per-rank times into per-iteration times of the slowest rank.
// Ranks that sit the measurement out pass no op and only take part in the
// (quiet) control collectives.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/cpu_pin.hpp"
#include "fabricbench/core/plan.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/stats.hpp"

namespace fb {

struct TimingPlan {
  int iters = 20;  // fixed: exactly this many timed iterations; adaptive: the minimum
  int warmup = 5;  // adaptive: at most, bounded by kWarmupBytes and a quarter of seconds_cap()
  double budget_s = 0;  // seconds per measurement (adaptive): no more iterations once spent; 0 = no cap
  // --check all: refill the inputs before and verify the outputs after every
  // timed iteration (outside its timed span).
  bool check_every = false;
  // Where the steps and iterations are published for the watchdog; may be null.
  ProgressBoard* board = nullptr;
  // Adaptive stop: after `iters`, stop once the 95% confidence interval of
  // the median is within +- this fraction of it. 0 with no budget = fixed;
  // 0 with a budget = kDefaultMedianCi.
  double median_ci = 0;
  // Agreed figures of the op (from its spec, the same on every rank): bytes
  // per op and ops per iteration (a ping-pong round trip is 2, a window of
  // messages `window`), for the caps on bytes and time. 0 bytes = no byte caps.
  std::uint64_t bytes = 0;
  double ops_per_iteration = 1.0;
  // This rank's place on its machine: participants hold a CPU of their own
  // for the timed loop (cpu_pin.hpp). count 0 = leave placement alone.
  CpuSlot cpu{};
  // A row whose scope runs several groups at once (intra: one per node;
  // rail: one per rail): every rank says so, and `group` is this rank's
  // group (null on ranks in none). The groups are not in step with each
  // other, so the row's times are its slowest group's own per-iteration
  // maxima, and lateness is measured inside each group (issue 34, defects 8
  // and 15); the stop rule still runs on figures every rank agrees on.
  bool several_groups = false;
  const Comm* group = nullptr;
  // Each iteration ends in step on every rank (OpDesc::answered): host
  // backends time each alone (IterationTimes::in_step).
  bool in_step = false;
  // Whether this rank's times count toward the row's per-iteration maximum:
  // false on the other rank of a round trip (OpDesc::round_trip), whose
  // interval is the same round trip seen from its middle. The larger of the
  // two each iteration was the larger of two samples of one jitter: ping-pong
  // at 8 B on 2 local ranks read 0.44 us, 0.40 us on peer_a's clock alone
  // beside osu_latency's 0.39-0.40 (OSU times rank 0 too). times_count().
  bool times_count = true;
  // Adaptive: the fewest timed iterations a cap (bytes, time, iterations)
  // may end the size at, when fewer than `iters` (RunOptions::cap_min_iters);
  // the interval target is still judged from `iters` on. 0 = `iters`.
  int cap_min_iters = 0;

  bool adaptive() const { return median_ci > 0 || budget_s > 0; }
  double ci_target() const { return median_ci > 0 ? median_ci : kDefaultMedianCi; }
  // Adaptive: seconds after which no batch starts (beyond -n).
  double seconds_cap() const { return budget_s > 0 ? budget_s : kDefaultSizeSeconds; }
  // The fewest timed iterations before any stop: `iters`, or fewer where a cap may end the size.
  int first_stop() const {
    const int n = std::max(iters, 1);
    return adaptive() && cap_min_iters > 0 ? std::min(n, cap_min_iters) : n;
  }
};

// Why a measurement stopped where it did (the record's `stopped_by`).
enum class StopReason {
  fixed,       // exactly -n iterations (no adaptive stop asked for)
  ci,          // the median's confidence interval reached the target
  iterations,  // kMaxAdaptiveSamples
  bytes,       // kMaxBytesPerSize moved
  time,        // the --time-budget (or kDefaultSizeSeconds) spent
};
std::string_view name(StopReason reason);
// The reason a record's `stopped_by` names; none for "" (a row of exactly -n
// before the field said "fixed") or a word no reason has.
std::optional<StopReason> stop_reason_named(std::string_view text);

struct Timing {
  // Per iteration: the slowest participating rank's time, per op (iteration
  // time divided by the op's ops_per_iteration). Identical on every rank.
  // With several groups: the slowest group's (the largest median).
  std::vector<double> iteration_us;
  // The independent timings behind them: one per iteration where each was
  // timed alone; one per timing group (timing_groups.hpp: the host's wall
  // clock, a device's events) or graph batch where several were timed
  // together and each given the mean (IterationTimes::iterations_per_timing). The median's interval and the stop rule
  // count these: copies of one mean would narrow the interval for nothing.
  std::vector<double> sample_us;
  // With several groups: a world rank of the slowest group (its path is the
  // row's); otherwise -1.
  int slowest_group_rank = -1;
  // Per world rank: mean lateness entering an iteration against the earliest
  // rank (of its group, with several), and mean own time per op. Only on
  // rank 0. Ranks that sat out: -1.
  std::vector<double> rank_lag_us;
  std::vector<double> rank_mean_us;
  // check_every: this rank's wrong elements in each timed iteration.
  std::vector<std::int64_t> wrong_per_iteration;
  StopReason stopped_by = StopReason::fixed;
};

// Labels the board (may be null) with the op about to be timed; the
// watchdog's automatic timeout scales with what one iteration moves.
// `extra_bytes`: what each iteration works through besides its traffic
// (--check all verifies every timed iteration: check_work_bytes).
void label_op(ProgressBoard* board, const OpSpec& spec, const PreparedOp& op, int scope, std::uint64_t extra_bytes = 0);

// What the check of one iteration works through, in bytes, for the
// watchdog's automatic timeout: every output element, and for a reduction
// every rank's pattern behind it (the expected value sums `nranks` inputs:
// the host check of 256 ranks x 1 GiB took about 90 s here, 1.3 ns per
// element and rank, and the timeout sized by the bytes alone was 61 s).
std::uint64_t check_work_bytes(const OpSpec& spec, int nranks);
// Relabels the board (may be null) for the check of `spec` on `nranks` ranks.
void label_check(ProgressBoard* board, const OpSpec& spec, int scope, int nranks);

// TimingPlan::times_count for the rank `rank_in_scope` of the op's scope
// (its group's communicator): every rank, except a round trip's other rank.
bool times_count(const OpSpec& spec, int rank_in_scope);

// `op` is null on ranks that do not participate.
Timing time_op(const Comm& world, PreparedOp* op, const TimingPlan& plan);

// `n` iterations outside the timed loop (warm-up, the check's), through
// run_timed so that the watchdog sees each one issued, each timed alone
// (no agreed time: groups of one). Returns the median of their times.
double run_untimed(PreparedOp& op, int n, ProgressBoard* board);

// The stop rule, pure functions of agreed figures so every rank decides alike.
// Warm-up iterations after the first (whose time is `first_us`).
int more_warmup(const TimingPlan& plan, double first_us);
// After the timed iterations so far (`iteration_us`, per op, and the time
// spent warming up): why to stop, or nothing to go on. Never before `iters`,
// except for a cap from first_stop() on (TimingPlan::cap_min_iters).
// `sample_us`: Timing::sample_us, whose spread sets the median's interval;
// without it each iteration is its own sample.
std::optional<StopReason> stop_reason(const TimingPlan& plan, std::span<const double> iteration_us,
                                      std::span<const double> sample_us, double warmup_us);
inline std::optional<StopReason> stop_reason(const TimingPlan& plan, std::span<const double> iteration_us,
                                             double warmup_us) {
  return stop_reason(plan, iteration_us, iteration_us, warmup_us);
}
// The most timed iterations in one batch: after each batch the ranks reduce
// its times to the slowest rank's (8 bytes per iteration) and publish their
// step, so a long -n moves on the watchdog's board and in bounded collectives.
inline constexpr int kMaxBatchIters = 1 << 16;
// How many iterations the next batch runs: first_stop(), then up to `iters`
// (in batches of at most kMaxBatchIters); then about as many as the interval's width says it
// still needs, within [done/4, done] and the caps.
int next_batch(const TimingPlan& plan, std::span<const double> iteration_us, std::span<const double> sample_us,
               double warmup_us);
inline int next_batch(const TimingPlan& plan, std::span<const double> iteration_us, double warmup_us) {
  return next_batch(plan, iteration_us, iteration_us, warmup_us);
}

// The summary a record carries: order statistics over the iterations, the
// median's interval over the independent samples (absent with fewer than 6),
// and how many samples there were.
TimeStats time_stats(const Timing& timing);

}  // namespace fb
