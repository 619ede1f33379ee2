#include "fabricbench/core/timing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "fabricbench/core/plan.hpp"
#include "fabricbench/core/stats.hpp"

namespace fb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void enter(const TimingPlan& plan, Phase phase, std::int64_t first_iteration = 0) {
  if (plan.board) plan.board->enter(phase, first_iteration);
}

std::atomic<std::int64_t>* issued(const TimingPlan& plan) { return plan.board ? plan.board->issued() : nullptr; }

// Warm-up: one iteration, agreed across ranks, then as many more as `warmup`
// asks for while they fit in a quarter of the budget. Returns the agreed
// slowest-rank time of the first warm-up iteration.
double warm_up(const Comm& world, PreparedOp* op, const TimingPlan& plan) {
  double first = 0;
  enter(plan, Phase::warmup);
  // NCCL's lazy connect out of the way first: it would be the first warm-up
  // iteration, which sizes the batches and the warm-up (and, with no warm-up,
  // the first timed iteration).
  if (op && op->connects_lazily()) run_untimed(*op, 1, plan.board);
  if (plan.warmup > 0 && op) first = run_untimed(*op, 1, plan.board);
  enter(plan, Phase::sync);
  world.allreduce_max_quiet({&first, 1});
  int more = std::max(plan.warmup - 1, 0);
  if (plan.budget_s > 0 && first > 0)
    more = std::min<double>(more, std::floor(plan.budget_s * 1e6 / 4 / first));
  enter(plan, Phase::warmup, 1);
  if (more > 0 && op) run_untimed(*op, more, plan.board, first);
  return first;
}

// One batch of timed iterations. With check_every, each iteration gets fresh
// inputs and poisoned outputs first and is verified after, both untimed.
void run_batch(PreparedOp& op, IterationTimes t, const TimingPlan& plan, std::vector<std::int64_t>& wrong) {
  if (!plan.check_every) {
    op.run_timed(t);
    return;
  }
  for (std::size_t i = 0; i < t.start_us.size(); ++i) {
    op.fill_check();
    op.run_timed({t.start_us.subspan(i, 1), t.duration_us.subspan(i, 1), t.issued, t.agreed_us});
    wrong.push_back(static_cast<std::int64_t>(op.count_wrong()));
  }
}

// Per world rank (on rank 0): mean lateness entering an iteration against the
// earliest rank, and mean own time per op; -1 for ranks that sat out.
void gather_lateness(const Comm& world, const std::vector<double>& my_start, const std::vector<double>& my_duration,
                     bool participant, Timing& t) {
  std::vector<double> earliest = my_start;
  world.allreduce_min_quiet(earliest);
  double lag = -1;
  double mean = -1;
  if (participant) {
    double sum = 0;
    for (std::size_t i = 0; i < my_start.size(); ++i) sum += my_start[i] - earliest[i];
    lag = sum / static_cast<double>(my_start.size());
    mean = std::accumulate(my_duration.begin(), my_duration.end(), 0.0) / static_cast<double>(my_duration.size());
  }
  const double mine[2] = {lag, mean};
  std::vector<double> all(2 * static_cast<std::size_t>(world.size()));
  MPI_Request req;
  MPI_Igather(mine, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, 0, world.native(), &req);
  wait_quiet(req);
  if (world.rank() != 0) return;
  for (std::size_t r = 0; r < static_cast<std::size_t>(world.size()); ++r) {
    t.rank_lag_us.push_back(all[2 * r]);
    t.rank_mean_us.push_back(all[2 * r + 1]);
  }
}

}  // namespace

double run_untimed(PreparedOp& op, int n, ProgressBoard* board, double agreed_us) {
  std::vector<double> start(static_cast<std::size_t>(n));
  std::vector<double> duration(static_cast<std::size_t>(n));
  op.run_timed({start, duration, board ? board->issued() : nullptr, agreed_us});
  return n > 0 ? duration[0] : 0.0;
}

int batch_size(const TimingPlan& plan, double warmup_iteration_us) {
  if (plan.budget_s <= 0) return std::max(plan.iters, 1);
  // About eight stop decisions inside the budget, never more than `iters` per batch.
  const double per_batch = plan.budget_s * 1e6 / 8 / std::max(warmup_iteration_us, 1e-3);
  return static_cast<int>(std::clamp(per_batch, 1.0, static_cast<double>(std::max(plan.iters, 1))));
}

bool should_stop(const TimingPlan& plan, const std::vector<double>& iteration_us, double previous_median_us) {
  const auto done = static_cast<int>(iteration_us.size());
  if (plan.budget_s <= 0) return done >= plan.iters;
  if (done >= plan.iters * kMaxItersFactor) return true;
  // Budget counted in measured time, which every rank agrees on exactly.
  const double spent_us = std::accumulate(iteration_us.begin(), iteration_us.end(), 0.0);
  if (spent_us >= plan.budget_s * 1e6) return true;
  if (done < plan.iters || previous_median_us <= 0) return false;
  const double median = median_of(iteration_us);
  return std::abs(median - previous_median_us) <= kStableMedianFraction * median;
}

void label_op(ProgressBoard* board, const OpSpec& spec, const PreparedOp& op, int scope) {
  if (!board) return;
  const auto per_iteration = static_cast<std::uint64_t>(static_cast<double>(spec.layout.bytes) * op.ops_per_iteration());
  board->label(spec.op, scope, spec.layout.bytes, spec.in_place, per_iteration);
}

Timing time_op(const Comm& world, PreparedOp* op, const TimingPlan& plan) {
  const double ops = op ? op->ops_per_iteration() : 1.0;
  // Ops per iteration, the same on every rank (a participant's; sitters-out pass no op).
  std::vector<double> ops_max{op ? ops : 0.0};
  world.allreduce_max_quiet(ops_max);
  const double ops_agreed = std::max(ops_max[0], 1.0);
  double first_us = warm_up(world, op, plan);
  // ops_per_iteration can differ between participants and non-participants; the
  // batch size must not, so it comes from agreed figures only.
  const int batch = batch_size(plan, first_us);

  Timing t;
  std::vector<double> my_start;
  std::vector<double> my_duration;
  double previous_median = 0;
  // A common start, so lateness compares like with like: a quiet barrier
  // while participants finish warming up, then a spinning one so that no rank
  // begins the timed loop still waking from a sleep.
  enter(plan, Phase::sync);
  world.barrier_quiet();
  MPI_Barrier(world.native());
  const double t0 = now_us();
  // Per iteration, agreed: the warm-up's first, then the median of the batches so far.
  double agreed_us = first_us;
  while (true) {
    const std::size_t begin = my_start.size();
    my_start.resize(begin + static_cast<std::size_t>(batch), kInf);
    my_duration.resize(begin + static_cast<std::size_t>(batch), 0.0);
    enter(plan, Phase::timed, static_cast<std::int64_t>(begin));
    if (op) {
      run_batch(*op,
                {std::span(my_start).subspan(begin), std::span(my_duration).subspan(begin), issued(plan), agreed_us},
                plan, t.wrong_per_iteration);
      for (std::size_t i = begin; i < my_start.size(); ++i) {
        my_start[i] -= t0;
        my_duration[i] /= ops;
      }
    }
    enter(plan, Phase::sync);
    std::vector<double> slowest(my_duration.begin() + static_cast<std::ptrdiff_t>(begin), my_duration.end());
    world.allreduce_max_quiet(slowest);
    t.iteration_us.insert(t.iteration_us.end(), slowest.begin(), slowest.end());
    if (should_stop(plan, t.iteration_us, previous_median)) break;
    previous_median = median_of(t.iteration_us);
    agreed_us = previous_median * ops_agreed;
  }
  gather_lateness(world, my_start, my_duration, op != nullptr, t);
  return t;
}

}  // namespace fb
