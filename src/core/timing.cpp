#include "fabricbench/core/timing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "fabricbench/core/enum_cover.hpp"
#include "fabricbench/core/op_desc.hpp"
#include "fabricbench/core/plan.hpp"
#include "fabricbench/core/stats.hpp"
#include "fabricbench/core/timing_groups.hpp"

namespace fb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void enter(const TimingPlan& plan, Phase phase, std::int64_t first_iteration = 0) {
  if (plan.board) plan.board->enter(phase, first_iteration);
}

std::atomic<std::int64_t>* issued(const TimingPlan& plan) { return plan.board ? plan.board->issued() : nullptr; }

// Warm-up: one iteration, agreed across ranks, then as many more as
// more_warmup allows. Returns the first one's agreed slowest-rank time and
// what the warm-up spent (agreed: that time times the count; later ones are
// rarely slower).
struct WarmUp {
  double first_us = 0;
  double spent_us = 0;
  // The slowest rank's median iteration after the first (0 without them):
  // what the first batch's timing groups are sized from, where the first,
  // cold iteration would time a whole fixed row one by one.
  double warm_us = 0;
};
WarmUp warm_up(const Comm& world, PreparedOp* op, const TimingPlan& plan) {
  double first = 0;
  enter(plan, Phase::warmup);
  // NCCL's lazy connect out of the way first: it would be the first warm-up
  // iteration, which sizes the batches and the warm-up (and, with no warm-up,
  // the first timed iteration).
  if (op && op->connects_lazily()) run_untimed(*op, 1, plan.board);
  if (plan.warmup > 0 && op) first = run_untimed(*op, 1, plan.board);
  enter(plan, Phase::sync);
  world.allreduce_max_quiet({&first, 1});
  const int more = plan.warmup > 0 ? more_warmup(plan, first) : 0;
  enter(plan, Phase::warmup, 1);
  // Each timed alone and their median: one interruption (a preempted rank
  // under load, 400 us) made the mean of four 2 us iterations 100 us, and the first
  // batch, sized from it, was timed one by one at the long iteration of each
  // index. Ranks out of step (long and short in turn) median to their pace.
  double warm = 0;
  if (more > 0 && op) warm = run_untimed(*op, more, plan.board);
  if (more > 0) {
    enter(plan, Phase::sync);
    world.allreduce_max_quiet({&warm, 1});
  }
  return {first, first * (1 + more), warm};
}

// A participant may come out of a sleeping control wait on a core it shares:
// it spins this long before the (spinning) barrier that starts the timed
// loop, so every participant enters the first timed iteration running.
constexpr double kSpinAwakeUs = 50;

void spin_awake() {
  const double until = now_us() + kSpinAwakeUs;
  while (now_us() < until) {
  }
}

// The figures of the stop rule on the iterations so far.
struct StopFigures {
  std::size_t done = 0;
  std::size_t samples = 0;  // independent timings (Timing::sample_us)
  double median_us = 0;
  double ci_fraction = 0;  // median_ci_fraction: infinity without an interval
  double spent_us = 0;     // warm-up and timed iterations, wall time
};

StopFigures progress_of(const TimingPlan& plan, std::span<const double> iteration_us, std::span<const double> sample_us,
                        double warmup_us) {
  std::vector<double> sorted(sample_us.begin(), sample_us.end());
  std::sort(sorted.begin(), sorted.end());
  StopFigures p;
  p.done = iteration_us.size();
  p.samples = sample_us.size();
  p.median_us = median_of(iteration_us);
  p.ci_fraction = median_ci_fraction(sorted, p.median_us);  // the interval around the median the row reports
  p.spent_us = warmup_us + std::accumulate(iteration_us.begin(), iteration_us.end(), 0.0) * plan.ops_per_iteration;
  return p;
}

std::uint64_t bytes_per_iteration(const TimingPlan& plan) {
  return static_cast<std::uint64_t>(static_cast<double>(plan.bytes) * std::max(plan.ops_per_iteration, 1.0));
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
    op.run_timed({t.start_us.subspan(i, 1), t.duration_us.subspan(i, 1), t.issued, t.agreed_us, t.iterations_per_timing,
                  t.in_step});
    wrong.push_back(static_cast<std::int64_t>(op.count_wrong()));
  }
}

// One sample per timing span of a batch: its first iteration's slowest-rank
// time (every iteration of a span carries the span's mean on each rank).
void add_samples(std::span<const double> slowest, std::size_t span, std::vector<double>& samples) {
  for (std::size_t i = 0; i < slowest.size(); i += span) samples.push_back(slowest[i]);
}

// Several groups at once: each group's own slowest rank per iteration, on its
// members; then the series of the group with the largest median, on every
// rank, in `t` (with a world rank of that group).
struct GroupSeries {
  std::vector<double> iteration_us;
  std::vector<double> sample_us;
};

void add_group_batch(const TimingPlan& plan, std::span<const double> mine, std::size_t span, GroupSeries& g) {
  std::vector<double> in_group(mine.begin(), mine.end());
  if (plan.group) plan.group->allreduce_max_quiet(in_group);
  add_samples(in_group, span, g.sample_us);
  g.iteration_us.insert(g.iteration_us.end(), in_group.begin(), in_group.end());
}

void take_slowest_group(const Comm& world, const TimingPlan& plan, GroupSeries g, Timing& t) {
  const double my_median = plan.group ? median_of(g.iteration_us) : -1.0;
  t.slowest_group_rank = world.maxloc_quiet(my_median).second;
  g.iteration_us.resize(t.iteration_us.size());  // ranks in no group receive
  g.sample_us.resize(t.sample_us.size());        // the same spans: as many samples
  world.bcast_bytes_quiet(std::as_writable_bytes(std::span(g.iteration_us)), t.slowest_group_rank);
  world.bcast_bytes_quiet(std::as_writable_bytes(std::span(g.sample_us)), t.slowest_group_rank);
  t.iteration_us = std::move(g.iteration_us);
  t.sample_us = std::move(g.sample_us);
}

// Per world rank (on rank 0): mean lateness entering an iteration against the
// earliest rank, and mean own time per op; -1 for ranks that sat out.
void gather_lateness(const Comm& world, const TimingPlan& plan, const std::vector<double>& my_start,
                     const std::vector<double>& my_duration, bool participant, Timing& t) {
  // Against the rank's own group: groups that drift apart are waited on by nobody.
  std::vector<double> earliest = my_start;
  if (!plan.several_groups) world.allreduce_min_quiet(earliest);
  if (plan.several_groups && plan.group) plan.group->allreduce_min_quiet(earliest);
  double lag = -1;
  double mean = -1;
  if (participant) {
    double sum = 0;
    for (std::size_t i = 0; i < my_start.size(); ++i) sum += my_start[i] - earliest[i];
    lag = sum / static_cast<double>(my_start.size());
    mean = std::accumulate(my_duration.begin(), my_duration.end(), 0.0) / static_cast<double>(my_duration.size());
  }
  const double mine[2] = {lag, mean};
  const std::vector<double> all = world.gather_quiet(mine, 0);
  if (world.rank() != 0) return;
  for (std::size_t r = 0; r < static_cast<std::size_t>(world.size()); ++r) {
    t.rank_lag_us.push_back(all[2 * r]);
    t.rank_mean_us.push_back(all[2 * r + 1]);
  }
}

}  // namespace

double run_untimed(PreparedOp& op, int n, ProgressBoard* board) {
  std::vector<double> start(static_cast<std::size_t>(n));
  std::vector<double> duration(static_cast<std::size_t>(n));
  op.run_timed({start, duration, board ? board->issued() : nullptr});
  return n > 0 ? median_of(duration) : 0.0;
}

std::string_view name(StopReason reason) {
  switch (reason) {
    case StopReason::fixed: return "fixed";
    case StopReason::ci: return "ci";
    case StopReason::iterations: return "iterations";
    case StopReason::bytes: return "bytes";
    case StopReason::time: return "time";
  }
  return "fixed";
}

namespace {
// Every reason, in the enum's order; a reason added to the enum and not here fails to compile.
constexpr std::array kStopReasons{StopReason::fixed, StopReason::ci, StopReason::iterations, StopReason::bytes,
                                  StopReason::time};
static_assert(enum_cover::covers<StopReason, kStopReasons>([](StopReason r) { return r; }));
}  // namespace

std::optional<StopReason> stop_reason_named(std::string_view text) {
  for (StopReason r : kStopReasons)
    if (name(r) == text) return r;
  return std::nullopt;
}

int more_warmup(const TimingPlan& plan, double first_us) {
  int more = std::max(plan.warmup - 1, 0);
  if (!plan.adaptive()) return more;
  if (const std::uint64_t per = bytes_per_iteration(plan); per > 0)
    more = static_cast<int>(std::min<std::uint64_t>(more, std::max<std::uint64_t>(kWarmupBytes / per, 1) - 1));
  // At most a quarter of the size's time cap, the default 0.25 s too: past
  // Open MPI's cliffs one iteration takes 0.25-1.3 s on 2 local ranks here,
  // and three more of them at 16 MiB were seconds of a sweep that time nothing.
  if (first_us > 0)
    more = static_cast<int>(std::min<double>(more, std::floor(plan.seconds_cap() * 1e6 / 4 / first_us)));
  return more;
}

std::optional<StopReason> stop_reason(const TimingPlan& plan, std::span<const double> iteration_us,
                                      std::span<const double> sample_us, double warmup_us) {
  const std::size_t iters = static_cast<std::size_t>(std::max(plan.iters, 1));
  // -n is honoured, whatever the caps say, except from cap_min_iters on where it was not given.
  if (iteration_us.size() < static_cast<std::size_t>(plan.first_stop())) return std::nullopt;
  if (!plan.adaptive()) return StopReason::fixed;
  const StopFigures p = progress_of(plan, iteration_us, sample_us, warmup_us);
  if (p.done >= iters && p.ci_fraction <= plan.ci_target()) return StopReason::ci;
  if (p.samples >= static_cast<std::size_t>(kMaxAdaptiveSamples) ||
      p.done >= static_cast<std::size_t>(kMaxAdaptiveIters))
    return StopReason::iterations;
  const std::uint64_t per = bytes_per_iteration(plan);
  if (per > 0 && p.done * per >= kMaxBytesPerSize) return StopReason::bytes;
  if (p.spent_us >= plan.seconds_cap() * 1e6) return StopReason::time;
  return std::nullopt;
}

namespace {

static_assert(static_cast<std::size_t>(kMaxAdaptiveIters) >= kMaxAdaptiveSamples * kMaxHostGroup,
              "the iteration cap must leave host rows their 5000 timings");

// Never past a count cap and never far past the others: the timings left (a
// batch of n iterations makes at most n timings), the iterations left, one
// batch's most, the bytes left, the time left at the median's pace.
double within_caps(const TimingPlan& plan, const StopFigures& p, double want) {
  const double done = static_cast<double>(p.done);
  want = std::min({want, static_cast<double>(kMaxAdaptiveSamples) - static_cast<double>(p.samples),
                   static_cast<double>(kMaxAdaptiveIters) - done, static_cast<double>(kMaxBatchIters)});
  if (const std::uint64_t per = bytes_per_iteration(plan); per > 0)
    want = std::min(want, std::ceil((static_cast<double>(kMaxBytesPerSize) - done * static_cast<double>(per)) /
                                    static_cast<double>(per)));
  const double pace_us = p.median_us * plan.ops_per_iteration;  // one iteration
  if (pace_us > 0) want = std::min(want, std::ceil((plan.seconds_cap() * 1e6 - p.spent_us) / pace_us));
  return want;
}

}  // namespace

int next_batch(const TimingPlan& plan, std::span<const double> iteration_us, std::span<const double> sample_us,
               double warmup_us) {
  const auto iters = static_cast<std::size_t>(std::max(plan.iters, 1));
  const auto first = static_cast<std::size_t>(plan.first_stop());
  if (iteration_us.size() < first)
    return static_cast<int>(std::min<std::size_t>(first - iteration_us.size(), kMaxBatchIters));
  const StopFigures p = progress_of(plan, iteration_us, sample_us, warmup_us);
  const double done = static_cast<double>(p.done);
  double want = 0;
  if (p.done < iters) {
    // The rest of -n, where a cap may end the size first (cap_min_iters).
    want = std::min<double>(static_cast<double>(iters) - done, kMaxBatchIters);
  } else {
    // The interval narrows as 1/sqrt(n): n (width / target)^2 in all, 20% over;
    // doubling while there is no interval yet.
    want = done;
    if (std::isfinite(p.ci_fraction)) {
      const double ratio = p.ci_fraction / plan.ci_target();
      want = done * ratio * ratio * 1.2 - done;
    }
    want = std::clamp(want, std::max(1.0, std::floor(done / 4)), done);
  }
  return static_cast<int>(std::max(within_caps(plan, p, want), 1.0));
}

void label_op(ProgressBoard* board, const OpSpec& spec, const PreparedOp& op, int scope, std::uint64_t extra_bytes) {
  if (!board) return;
  const auto per_iteration = static_cast<std::uint64_t>(static_cast<double>(spec.layout.bytes) * op.ops_per_iteration());
  const std::uint64_t work = per_iteration > UINT64_MAX - extra_bytes ? UINT64_MAX : per_iteration + extra_bytes;
  board->label(spec.op, scope, spec.layout.bytes, spec.in_place, work);
}

std::uint64_t check_work_bytes(const OpSpec& spec, int nranks) {
  const std::uint64_t out = spec.layout.out_elems * dtype_bytes(spec.dtype);
  const auto per_element = static_cast<std::uint64_t>(op_desc(spec.op).reduces ? std::max(nranks, 1) : 1);
  return out > UINT64_MAX / per_element ? UINT64_MAX : out * per_element;
}

void label_check(ProgressBoard* board, const OpSpec& spec, int scope, int nranks) {
  if (board) board->label(spec.op, scope, spec.layout.bytes, spec.in_place, check_work_bytes(spec, nranks));
}

bool times_count(const OpSpec& spec, int rank_in_scope) {
  return !op_desc(spec.op).round_trip || rank_in_scope == spec.peer_a;
}

Timing time_op(const Comm& world, PreparedOp* op, const TimingPlan& plan) {
  const double ops = op ? op->ops_per_iteration() : 1.0;
  // Ops per iteration, the same on every rank (a participant's; sitters-out pass no op).
  std::vector<double> ops_max{op ? ops : 0.0};
  world.allreduce_max_quiet(ops_max);
  const double ops_agreed = std::max(ops_max[0], 1.0);
  const WarmUp warm = warm_up(world, op, plan);
  const double warmup_us = warm.spent_us;

  Timing t;
  std::vector<double> my_start;
  std::vector<double> my_duration;
  // A common start, so lateness compares like with like: a quiet barrier
  // while participants finish warming up; each participant then takes a CPU
  // of its own (cpu_pin.hpp), spins a moment, and a spinning barrier starts
  // the timed loop, so that no rank begins it asleep or sharing a core.
  enter(plan, Phase::sync);
  world.barrier_quiet();
  std::optional<PinnedCpu> pinned;
  if (op) {
    pinned.emplace(plan.cpu);
    spin_awake();
  }
  world.barrier();
  const double t0 = now_us();
  // Per iteration, agreed: the warm-up's after its first (else its first),
  // then the median of the batches so far.
  double agreed_us = warm.warm_us > 0 ? warm.warm_us : warm.first_us;
  GroupSeries groups;
  while (true) {
    // From agreed figures only: ops_per_iteration can differ between
    // participants and non-participants, the batch size must not.
    int batch = next_batch(plan, t.iteration_us, t.sample_us, warmup_us);
    // Without a warm-up there is no time to size timing groups from: a short
    // first batch, one by one, gives one to the rest of the row.
    if (t.iteration_us.empty() && !(agreed_us > 0)) batch = std::min(batch, static_cast<int>(2 * kMaxHostGroup));
    const std::size_t begin = my_start.size();
    my_start.resize(begin + static_cast<std::size_t>(batch), kInf);
    my_duration.resize(begin + static_cast<std::size_t>(batch), 0.0);
    enter(plan, Phase::timed, static_cast<std::int64_t>(begin));
    std::size_t together = 1;
    if (op) {
      run_batch(*op,
                {std::span(my_start).subspan(begin), std::span(my_duration).subspan(begin), issued(plan), agreed_us,
                 &together, plan.in_step},
                plan, t.wrong_per_iteration);
      for (std::size_t i = begin; i < my_start.size(); ++i) {
        my_start[i] -= t0;
        my_duration[i] /= ops;
      }
    }
    enter(plan, Phase::sync);
    std::span<const double> mine = std::span(my_duration).subspan(begin);
    const std::vector<double> zeros(plan.times_count ? 0 : mine.size(), 0.0);  // a rank that does not count
    if (!plan.times_count) mine = zeros;
    std::vector<double> slowest(mine.begin(), mine.end());
    slowest.push_back(static_cast<double>(together));  // in the same reduction: the widest span of any rank
    world.allreduce_max_quiet(slowest);
    const auto span = static_cast<std::size_t>(std::max(slowest.back(), 1.0));
    slowest.pop_back();
    add_samples(slowest, span, t.sample_us);
    if (plan.several_groups) add_group_batch(plan, mine, span, groups);
    t.iteration_us.insert(t.iteration_us.end(), slowest.begin(), slowest.end());
    if (const auto why = stop_reason(plan, t.iteration_us, t.sample_us, warmup_us)) {
      t.stopped_by = *why;
      break;
    }
    agreed_us = median_of(t.iteration_us) * ops_agreed;
  }
  pinned.reset();
  if (plan.several_groups) take_slowest_group(world, plan, std::move(groups), t);
  gather_lateness(world, plan, my_start, my_duration, op != nullptr, t);
  return t;
}

TimeStats time_stats(const Timing& timing) {
  TimeStats s = summarize(timing.iteration_us);
  if (timing.sample_us.size() == timing.iteration_us.size()) return s;
  const TimeStats by_sample = summarize(timing.sample_us);
  s.samples = timing.sample_us.size();
  s.ci_low_us = by_sample.ci_low_us;
  s.ci_high_us = by_sample.ci_high_us;
  return s;
}

}  // namespace fb
