#include "fabricbench/step/executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/layout.hpp"

namespace fb::step {
namespace {

constexpr std::array kModes{std::pair{Mode::compute_only, "compute_only"}, std::pair{Mode::comm_only, "comm_only"},
                            std::pair{Mode::serial, "serial"}, std::pair{Mode::overlapped, "overlapped"}};

// Where in the compute each call is issued, in microseconds from the start.
struct Issue {
  double at_us;
  std::size_t comm;
  bool in_window;
};

std::vector<Issue> timeline(const StepSchedule& s) {
  std::vector<Issue> out;
  const double t = s.layers_us();
  for (std::size_t c = 0; c < s.comms.size(); ++c) {
    const StepComm& sc = s.comms[c];
    for (int j = 0; j < sc.calls; ++j) {
      if (sc.window > 0) {
        // Evenly over the last `window` of the compute, the last call at its
        // end: a gradient bucket is ready once its layers' backward is done.
        out.push_back({t * (1 - sc.window) + (j + 1) * t * sc.window / sc.calls, c, true});
      } else {
        // Evenly inside the compute, never at its ends: a blocking call sits
        // between two pieces of work (a tensor-parallel all-reduce per layer).
        out.push_back({(j + 1) * t / (sc.calls + 1), c, false});
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Issue& a, const Issue& b) { return a.at_us < b.at_us; });
  return out;
}

}  // namespace

std::string_view name(Mode m) {
  for (const auto& [mode, text] : kModes)
    if (mode == m) return text;
  return "?";
}

std::string_view name(Group g) {
  switch (g) {
    case Group::world:
      return "world";
    case Group::tp:
      return "tp";
    case Group::pp:
      return "pp";
    case Group::dp:
      return "dp";
  }
  return "?";
}

int group_colour(Group g, int rank, const StepSchedule& s) {
  // Coordinates: tp fastest, then dp, then pp. A group's colour is the
  // rank's coordinates in the other two dimensions.
  const int tp = rank % s.tp;
  const int dp = (rank / s.tp) % s.dp;
  const int pp = rank / (s.tp * s.dp);
  switch (g) {
    case Group::world:
      return 0;
    case Group::tp:
      return pp * s.dp + dp;
    case Group::dp:
      return pp * s.tp + tp;
    case Group::pp:
      return dp * s.tp + tp;
  }
  return 0;
}

void validate(const StepSchedule& s, int ranks) {
  if (s.tp < 1 || s.pp < 1 || s.dp < 1 || s.tp * s.pp * s.dp != ranks)
    throw UsageError(fmt::format("step: tp {} x pp {} x dp {} must equal the {} ranks of the job", s.tp, s.pp, s.dp,
                                 ranks));
  if (!(s.compute_us >= 0)) throw UsageError("step: compute time must be 0 or more");
  if (!(s.optimizer_us >= 0) || !(s.non_gemm_us >= s.optimizer_us))
    throw UsageError("step: the non-GEMM time must be 0 or more and hold the optimizer's");
  for (const auto& c : s.comms) {
    if (c.calls < 0 || c.window < 0 || c.window > 1)
      throw UsageError(fmt::format("step: '{}': calls must be >= 0 and window in 0..1", c.name));
    if (is_pair_op(c.op))
      throw UsageError(fmt::format("step: '{}': {} is not a collective the step can issue", c.name, fb::name(c.op)));
  }
}

Executor::Executor(const Comm& world, Backend& backend, ComputeKernel& kernel, StepSchedule schedule, Dtype dtype,
                   ExecutorOptions options)
    : world_(world), kernel_(kernel), schedule_(std::move(schedule)), board_(options.board) {
  validate(schedule_, world.size());
  for (std::size_t c = 0; c < schedule_.comms.size(); ++c) {
    const StepComm& sc = schedule_.comms[c];
    Comm group = world.split(group_colour(sc.group, world.rank(), schedule_), world.rank());
    OpSpec spec;
    spec.op = sc.op;
    spec.dtype = dtype;
    spec.root = has_root(sc.op) ? 0 : -1;
    spec.layout = layout_for(sc.op, dtype, sc.bytes, group.size());
    const Support support = support_for(backend, spec);
    const std::string refusal = agree_on_error(world, support.ok ? "" : fmt::format("'{}': {}", sc.name, support.why));
    if (!refusal.empty()) throw UsageError(refusal);
    std::unique_ptr<BackendGroup> bg;
    std::unique_ptr<PreparedOp> op;
    const bool runs = (group.size() > 1 || options.run_one_rank_groups) && spec.layout.block > 0;
    // Every rank opens the calls' groups in the same order: one step each,
    // labelled with the call, so a rank stuck in its open is named.
    label(c);
    enter(Phase::setup);
    const OpeningBackend opening(board_, &backend);  // a hang in NCCL's init or split can be aborted
    if (runs)
      bg = backend.open(group);
    else
      backend.skip_open();  // groups may be split from one world communicator: every rank takes part
    // The group takes the open's place with no moment between (progress.hpp), and covers allocate().
    const ActiveGroup active(board_, bg.get());
    // Device buffers may not fit beside the compute's matrices: every rank
    // learns which call did not, before any is measured.
    const Support room = runs ? bg->allocate(spec) : Support::yes();
    const std::string no_room = agree_on_error(
        world, room.ok ? ""
                       : fmt::format("'{}': {}; the calls' buffers share the GPU with the step's compute: give "
                                     "the compute less (--gemm-size), or use a workload whose calls are smaller",
                                     sc.name, room.why));
    if (!no_room.empty()) throw UsageError(no_room);
    if (runs) op = bg->prepare(spec);
    groups_.push_back(std::move(bg));
    ops_.push_back(std::move(op));
    comms_.push_back(std::move(group));
  }
  enter(Phase::idle);
}

Executor::~Executor() = default;

void Executor::enter(Phase phase) {
  if (board_) board_->enter(phase);
}

// Every rank walks the same timeline, so the phases entered here line up
// across ranks: compute stretches (not an op: never a hang by themselves)
// and calls (an op: one issued, or not yet, on each rank).
void Executor::label(std::size_t comm) {
  if (!board_) return;
  const StepComm& sc = schedule_.comms[comm];
  board_->label(sc.op, -1, sc.bytes, false, sc.bytes);
}

void Executor::blocking_call(std::size_t comm) {
  // The queued calls go first: NCCL needs the calls of its communicators in
  // the same order on every rank, and a call issued now would otherwise
  // overtake queued ones on some ranks and not on others. What the queue
  // still holds is then exposed, as it is behind a blocking call in a framework.
  drain();
  PreparedOp& op = *ops_[comm];
  enter(Phase::timed);
  // The watchdog aborts this group (NCCL: ncclCommAbort) if the call hangs.
  const ActiveGroup active(board_, groups_[comm].get());
  start(comm);
  wait_for(op);
}

void Executor::start(std::size_t comm) {
  label(comm);
  ops_[comm]->start();
  // Counted once start() has returned: a rank held before it issued the call
  // (or inside a start() that blocks) is the one behind.
  if (board_) count_issued(board_->issued());
}

void Executor::pump() {
  if (in_flight_ && in_flight_->finished()) {
    in_flight_ = nullptr;
    in_flight_group_.reset();
  }
  while (!in_flight_ && !queue_.empty()) {
    const std::size_t next = queue_.front();
    queue_.pop_front();
    if (!ops_[next]) continue;
    // The call in flight under the compute is the group the watchdog aborts
    // (NCCL: ncclCommAbort), as a blocking call's is: a queued call that
    // never completes is a hang too (drain() waits for it).
    in_flight_group_.emplace(board_, groups_[next].get());
    start(next);
    in_flight_ = ops_[next].get();
  }
}

void Executor::drain() {
  // Every rank enters the phase, queue empty or not (how much is left is a
  // matter of timing; the step numbers must not be): an op phase, where the
  // queued calls start (labelled and counted) and complete.
  enter(Phase::timed);
  while (in_flight_ || !queue_.empty()) pump();
}

void Executor::wait_for(PreparedOp& op) {
  while (!op.finished()) pump();
}

// A stretch of the layers' compute: the products and the layers' non-GEMM
// work in the schedule's proportion, so every stretch (and the window of
// calls under it) holds both kinds of work as a layer's passes do.
void Executor::stretch(double us, const std::function<void()>& poll) {
  const double layers_us = schedule_.layers_us();
  const double products = layers_us > 0 ? us * schedule_.compute_us / layers_us : us;
  kernel_.work(products, us - products, poll);
}

double Executor::one_step(Mode mode) {
  static const std::function<void()> idle = [] {};
  const std::function<void()> progress = [this] { pump(); };
  const double t0 = now_us();
  if (mode == Mode::compute_only) {
    last_parts_ = compute_alone();
  } else if (mode == Mode::comm_only) {
    for (const Issue& issue : timeline(schedule_))
      if (ops_[issue.comm]) blocking_call(issue.comm);
  } else {
    double at = 0;
    for (const Issue& issue : timeline(schedule_)) {
      enter(Phase::compute);
      stretch(issue.at_us - at, progress);
      at = issue.at_us;
      if (!ops_[issue.comm]) continue;
      if (mode == Mode::overlapped && issue.in_window) {
        queue_.push_back(issue.comm);
        pump();
      } else {
        blocking_call(issue.comm);
      }
    }
    enter(Phase::compute);
    stretch(schedule_.layers_us() - at, progress);
    drain();
    // The optimizer updates the parameters once every gradient has arrived:
    // after the last collective, nothing left to hide under it.
    enter(Phase::compute);
    kernel_.work(0, schedule_.optimizer_us, idle);
  }
  kernel_.sync();
  return now_us() - t0;
}

// The compute alone in its parts, each timed on its own: the products, the
// layers' non-GEMM work, the optimizer. compute() returns with its work
// done on both kernels (the GPU's waits on its products while polling), so
// no sync() between the parts: sync() ends a step. The parts are the
// schedule's; where they run in a step with communication does not change
// what each costs alone.
ComputeParts Executor::compute_alone() {
  static const std::function<void()> idle = [] {};
  const auto timed = [&](double products_us, double memory_us) {
    const double t0 = now_us();
    kernel_.work(products_us, memory_us, idle);
    return now_us() - t0;
  };
  enter(Phase::compute);
  ComputeParts parts;
  parts.products_us = timed(schedule_.compute_us, 0);
  const double layers_non_gemm_us = timed(0, schedule_.non_gemm_us - schedule_.optimizer_us);
  parts.optimizer_us = timed(0, schedule_.optimizer_us);
  parts.non_gemm_us = layers_non_gemm_us + parts.optimizer_us;
  return parts;
}

// Per part, the median over steps of the slowest rank, as for the modes.
ComputeParts Executor::summarize_parts(const std::vector<ComputeParts>& steps) {
  enter(Phase::sync);
  std::vector<double> products, non_gemm, optimizer;
  for (const ComputeParts& p : steps) {
    products.push_back(p.products_us);
    non_gemm.push_back(p.non_gemm_us);
    optimizer.push_back(p.optimizer_us);
  }
  world_.allreduce_max_quiet(products);
  world_.allreduce_max_quiet(non_gemm);
  world_.allreduce_max_quiet(optimizer);
  return {median_of(products), median_of(non_gemm), median_of(optimizer)};
}

double Executor::timed_step(Mode mode) {
  enter(Phase::sync);
  world_.barrier_quiet();
  world_.barrier();  // every rank starts the step together
  return one_step(mode);
}

ModeTimes Executor::summarize_mode(Mode mode, std::vector<double> times) {
  enter(Phase::sync);
  const double mine = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(std::max<std::size_t>(times.size(), 1));
  world_.allreduce_max_quiet(times);
  ModeTimes m;
  m.mode = mode;
  m.step = summarize(times);
  const auto [mean, rank] = world_.maxloc_quiet(mine);
  m.slowest_rank = rank;
  m.slowest_rank_mean_us = mean;
  return m;
}

double Executor::call_alone_us(std::size_t c, int repeats) {
  // Each call alone, slowest rank, median over `repeats`.
  std::vector<double> t(static_cast<std::size_t>(repeats), 0.0);
  for (auto& x : t) {
    enter(Phase::sync);
    world_.barrier_quiet();
    world_.barrier();
    if (ops_[c]) {
      const double s = now_us();
      blocking_call(c);
      x = now_us() - s;
    }
  }
  enter(Phase::sync);
  world_.allreduce_max_quiet(t);
  return median_of(t);
}

StepReport Executor::run(int steps, int warmup) {
  // The modes take turns, one step each per round, so that a change in the
  // machine's load while they run (another job, a noisy neighbour) reaches
  // every mode alike rather than one mode's whole series.
  for (int i = 0; i < warmup; ++i)
    for (const auto& [mode, text] : kModes) one_step(mode);
  std::vector<std::vector<double>> times(kModes.size());
  std::vector<ComputeParts> parts;
  for (int i = 0; i < steps; ++i)
    for (std::size_t m = 0; m < kModes.size(); ++m) {
      times[m].push_back(timed_step(kModes[m].first));
      if (kModes[m].first == Mode::compute_only) parts.push_back(last_parts_);
    }
  StepReport r;
  for (std::size_t m = 0; m < kModes.size(); ++m) r.modes.push_back(summarize_mode(kModes[m].first, times[m]));
  r.parts = summarize_parts(parts);
  for (std::size_t c = 0; c < schedule_.comms.size(); ++c) {
    const StepComm& sc = schedule_.comms[c];
    const double per_call = call_alone_us(c, steps);
    r.comms.push_back({sc.name, per_call, per_call * sc.calls});
  }
  return r;
}

}  // namespace fb::step
