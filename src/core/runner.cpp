#include "fabricbench/core/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <spdlog/spdlog.h>

#include "fabricbench/core/check_inexact.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/modes.hpp"
#include "fabricbench/core/op_desc.hpp"
#include "fabricbench/core/stats.hpp"
#include "fabricbench/core/timing.hpp"
#include "wrong_counts.hpp"

namespace fb {

RunTotals& RunTotals::operator+=(const RunTotals& other) {
  rows += other.rows;
  skipped += other.skipped;
  wrong += other.wrong;
  busbw_sum_gbps += other.busbw_sum_gbps;
  passes += other.passes;
  if (wrong_by_rank.size() < other.wrong_by_rank.size()) wrong_by_rank.resize(other.wrong_by_rank.size(), 0);
  for (std::size_t r = 0; r < other.wrong_by_rank.size(); ++r) wrong_by_rank[r] += other.wrong_by_rank[r];
  return *this;
}

SweepTotals RunTotals::closing(bool checked, bool burn_in) const {
  SweepTotals::Figures figures;
  figures.wrong = checked ? wrong : -1;
  if (checked) {
    std::vector<int> ranks;
    for (std::size_t r = 0; r < wrong_by_rank.size(); ++r)
      if (wrong_by_rank[r] > 0) ranks.push_back(static_cast<int>(r));
    figures.wrong_ranks = ranks;
  }
  if (burn_in) figures.passes = passes;
  figures.avg_busbw_gbps = rows ? busbw_sum_gbps / static_cast<double>(rows) : 0.0;
  return SweepTotals{rows, skipped, figures};
}
Runner::Runner(const Comm& world, const NodeMap& nodes, Backend& backend, const RunOptions& options, RowSink* sink)
    : world_(world), nodes_(nodes), backend_(backend), options_(options), sink_(world.rank() == 0 ? sink : nullptr) {
  sizes_ = expand(options_.grid);
}

OpSpec Runner::spec_for(Op op, bool in_place, std::uint64_t bytes, int group_size) const {
  OpSpec spec;
  spec.op = op;
  spec.dtype = options_.dtype;
  spec.redop = options_.redop;
  spec.root = has_root(op) ? options_.root : -1;
  spec.in_place = in_place;
  spec.layout = layout_for(op, options_.dtype, bytes, group_size);
  spec.peer_a = options_.peer_a;
  spec.peer_b = options_.peer_b;
  spec.window = options_.window;
  return spec;
}

void Runner::preflight() const {
  // The backend's own options and placement first (once per command: a GPU
  // backend keeps its placement across the sweeps of a profile).
  set_up_backend(world_, backend_, options_);
  // Memory before support: a size that does not fit is the first thing to
  // say (not that its element count exceeds MPI's int). Buffers barely
  // depend on the rank count (see layout.hpp): size them for the world; the
  // doubling saturates, so a size near 2^64 cannot wrap to a small need.
  const std::uint64_t largest = largest_buffer_bytes(world_.size());
  const Support fit = backend_.fits(largest > UINT64_MAX / 2 ? UINT64_MAX : 2 * largest, nodes_.local_size);
  // Nodes differ in free memory: every rank must learn of any rank's refusal.
  const std::string refusal = agree_on_error(world_, fit.ok ? "" : fit.why);
  if (!refusal.empty()) throw UsageError(refusal);
  // Support depends only on the options, so every rank reaches the same verdict.
  std::string first_refusal;
  bool any = false;
  for (Op op : options_.ops) {
    for (bool in_place : {false, true}) {
      const bool in_place_wanted = options_.in_place || options_.in_place_where_out_refused;
      if ((in_place && !in_place_wanted) || (!in_place && !options_.out_of_place)) continue;
      const Support s = support_for(backend_, spec_for(op, in_place, sizes_.front(), world_.size()));
      any = any || s.ok;
      if (!s.ok && first_refusal.empty()) first_refusal = s.why;
    }
  }
  if (!any) throw UsageError(fmt::format("nothing to measure on backend {}: {}", backend_.name(), first_refusal));
  const bool rooted = std::any_of(options_.ops.begin(), options_.ops.end(), [](Op op) { return has_root(op); });
  if (rooted && options_.root >= world_.size())
    throw UsageError(fmt::format("--root {}: the job has {} ranks", options_.root, world_.size()));
}

RunTotals Runner::run() {
  started_us_ = now_us();
  cpu_slot_ = cpu_slot(world_, backend_.near_cpus());
  totals_.wrong_by_rank.assign(static_cast<std::size_t>(world_.size()), 0);
  do {
    ++totals_.passes;
    for (Scope scope : options_.scopes)
      if (!stopped_) run_scope(scope);
  } while (options_.duration_s > 0 && !stopped_ && !out_of_time());
  return totals_;
}

std::vector<CounterLine> Runner::counter_lines(const OpSpec& spec, Scope scope) {
  if (!counters_) return {};
  enter(Phase::sync);
  const double start_us = now_us();
  std::vector<CounterMove> mine;
  if (nodes_.local_rank == 0) mine = counters_->after();
  if (nodes_.local_rank == 0 && world_.rank() == 0)
    spdlog::debug("counters: {} files read before and after the row: {:.1f} us before, {:.1f} us after",
                  counters_->size(), counters_before_us_, now_us() - start_us);
  // An intra row stays inside each node; the others leave it when there are nodes to reach.
  const RowReach reach{scope != Scope::intra && nodes_.nodes > 1, backend_.on_gpus()};
  std::vector<CounterLine> lines = gather_counter_moves(world_, nodes_, mine, reach);
  for (CounterLine& l : lines) {
    l.op = std::string(name(spec.op));
    l.scope = std::string(name(scope));
    l.bytes = spec.layout.bytes;
    l.in_place = spec.in_place;
  }
  return lines;
}

void Runner::enter(Phase phase) {
  if (board_) board_->enter(phase);
}

bool Runner::out_of_time() {
  enter(Phase::sync);
  std::int64_t up = world_.rank() == 0 && now_us() - started_us_ >= options_.duration_s * 1e6;
  world_.bcast_quiet({&up, 1}, 0);
  stopped_ = up != 0;
  return stopped_;
}

std::uint64_t Runner::largest_buffer_bytes(int group_size) const {
  std::uint64_t most = 0;
  for (Op op : options_.ops) {
    const Layout l = layout_for(op, options_.dtype, sizes_.back(), group_size);
    const std::uint64_t elems = std::max(l.in_elems, l.out_elems);
    const std::uint64_t word = dtype_bytes(options_.dtype);
    most = std::max(most, elems > UINT64_MAX / word ? UINT64_MAX : elems * word);
  }
  return most;
}

void Runner::run_scope(Scope scope) {
  if (board_) board_->label_scope(static_cast<int>(scope));
  enter(Phase::setup);
  ScopeGroup group = make_scope(world_, nodes_, scope, backend_.domain_traffic());
  if (!group.skip.empty()) {
    if (sink_ && totals_.passes == 1) sink_->skip({"", std::string(name(scope)), 0, false, group.skip});
    if (totals_.passes == 1) ++totals_.skipped;
    return;
  }
  std::unique_ptr<BackendGroup> bgroup;
  const OpeningBackend opening(board_, &backend_);  // a hang in NCCL's init or split can be aborted
  if (group.member())
    bgroup = backend_.open(group.comm);
  else
    backend_.skip_open();
  // The watchdog may abort the group from here on (NCCL: ncclCommAbort): it
  // takes the open's place with no moment between, and covers reserve().
  const ActiveGroup active(board_, bgroup.get());
  if (bgroup) {
    const std::uint64_t largest = largest_buffer_bytes(group.group_size);
    bgroup->reserve(largest, largest);
  }
  for (Op op : options_.ops)
    if (!stopped_) run_op(group, bgroup.get(), op);
}

void Runner::run_op(const ScopeGroup& group, BackendGroup* bgroup, Op op) {
  // An op the backend has no code for: one line saying so, and nothing prepared or timed.
  if (const Support runs = backend_runs(backend_, op); !runs.ok) {
    skip(group, spec_for(op, false, 0, group.group_size), 0, runs.why);
    return;
  }
  if (is_pair_op(op) && (std::max(options_.peer_a, options_.peer_b) >= group.group_size)) {
    skip(group, spec_for(op, false, 0, group.group_size), 0,
         fmt::format("--peers {},{}: the {} scope has {} ranks", options_.peer_a, options_.peer_b, name(group.scope),
                     group.group_size));
    return;
  }
  if (has_root(op) && options_.root >= group.group_size) {
    skip(group, spec_for(op, false, 0, group.group_size), 0,
         fmt::format("--root {}: the {} scope has {} ranks", options_.root, name(group.scope), group.group_size));
    return;
  }
  std::vector<bool> placements;
  if (options_.out_of_place) placements.push_back(false);
  if (options_.in_place && has_in_place(op)) placements.push_back(true);
  // Support depends on the op and options, not the size: the first size decides.
  if (options_.in_place_where_out_refused && !options_.in_place && has_in_place(op) &&
      !support_for(backend_, spec_for(op, false, sizes_.front(), group.group_size)).ok)
    placements = {true};

  std::vector<bool> unsupported(2, false);  // report an unsupported placement once, not per size
  for (std::size_t k = 0; k < sizes_.size(); ++k) {
    if (options_.duration_s > 0 && out_of_time()) return;
    if (sink_) sink_->progress({std::string(name(op)), std::string(name(group.scope)), k + 1, sizes_.size(), sizes_[k]});
    for (bool in_place : placements) {
      const OpSpec spec = spec_for(op, in_place, sizes_[k], group.group_size);
      if (spec.layout.block == 0) {
        skip(group, spec, sizes_[k],
             fmt::format("{} B is less than one {} per rank for {} ranks", sizes_[k], name(options_.dtype),
                         group.group_size));
        continue;
      }
      const Support support = support_for(backend_, spec);
      if (!support.ok) {
        if (!unsupported[in_place]) skip(group, spec, 0, support.why);
        unsupported[in_place] = true;
        continue;
      }
      measure(group, bgroup, spec);
    }
    if (sink_) sink_->size_done();
  }
}

void Runner::note_inexact_check(const OpSpec& spec, int nranks) {
  if (check::exact(spec.dtype, op_desc(spec.op).reduces, spec.redop, nranks)) return;
  const std::string key = fmt::format("{} {} {} {}", name(spec.op), name(spec.dtype), name(spec.redop), nranks);
  if (!inexact_noted_.insert(key).second) return;
  const check::Bounds b = check::inexact_bounds(spec.dtype, spec.redop, nranks);
  spdlog::warn("--check of {} {} {} over {} ranks is not exact: {} holds integers exactly only up to {}, and NCCL keeps "
               "partial sums in it, so the result depends on NCCL's order; accepted when finite and in {}{:g}, {:g}] "
               "(poison, NaN or a lost contribution below that still count)",
               name(spec.op), name(spec.dtype), name(spec.redop), nranks, name(spec.dtype),
               exact_integer_range(spec.dtype), b.low_open ? "(" : "[", b.low, b.high);
}

void Runner::skip(const ScopeGroup& group, const OpSpec& spec, std::uint64_t bytes, const std::string& reason) {
  if (totals_.passes > 1) return;  // a burn-in's later passes skip the same, for the same reasons
  if (sink_) sink_->skip({std::string(name(spec.op)), std::string(name(group.scope)), bytes, spec.in_place, reason});
  ++totals_.skipped;
}

CheckVerdict Runner::check(PreparedOp* op, const std::vector<std::int64_t>& per_iteration, const OpSpec& spec,
                           const ScopeGroup& group) {
  std::int64_t mine = 0;
  label_check(board_, spec, static_cast<int>(group.scope), group.group_size);
  if (options_.check_every) {
    mine = std::accumulate(per_iteration.begin(), per_iteration.end(), std::int64_t{0});
  } else {
    enter(Phase::check);
    if (op) op->fill_check();
    enter(Phase::sync);
    world_.barrier_quiet();  // every input written before any rank reads a peer's
    enter(Phase::check);
    if (op) {
      run_untimed(*op, 1, board_);
      mine = static_cast<std::int64_t>(op->count_wrong());
    }
  }
  enter(Phase::sync);
  CheckVerdict v;
  const std::vector<std::int64_t> per_rank = wrong_by_rank(world_, mine);
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    if (per_rank[r] > 0) v.ranks.push_back(static_cast<int>(r));
    v.wrong += per_rank[r];
    totals_.wrong_by_rank[r] += per_rank[r];
  }
  if (options_.check_every) v.at = gather_wrong_at(world_, per_iteration);
  totals_.wrong += v.wrong;
  return v;
}

void Runner::measure(const ScopeGroup& group, BackendGroup* bgroup, const OpSpec& spec) {
  const int scope = static_cast<int>(group.scope);
  if (board_) board_->label(spec.op, scope, spec.layout.bytes, spec.in_place, spec.layout.bytes);
  enter(Phase::setup);
  // Room for this size on every member (device memory runs out per size, not per sweep).
  const Support room = bgroup ? bgroup->allocate(spec) : Support::yes();
  const std::string no_room = agree_on_error(world_, room.ok ? "" : room.why);
  if (!no_room.empty()) {
    skip(group, spec, spec.layout.bytes, no_room);
    return;
  }
  std::unique_ptr<PreparedOp> prepared;
  if (group.member()) prepared = bgroup->prepare(spec);
  PreparedOp* op = prepared && prepared->participates() ? prepared.get() : nullptr;
  // --check all verifies every timed iteration: its work is each iteration's too.
  if (op) label_op(board_, spec, *op, scope, options_.check_every ? check_work_bytes(spec, group.group_size) : 0);

  TimingPlan plan{options_.iters, options_.warmup, options_.time_budget_s, options_.check_every, board_};
  plan.median_ci = options_.median_ci;
  plan.cap_min_iters = options_.cap_min_iters;
  plan.bytes = spec.layout.bytes;
  plan.ops_per_iteration = ops_per_iteration(spec);
  plan.in_step = op_desc(spec.op).answered;
  plan.times_count = times_count(spec, group.member() ? group.comm.rank() : -1);
  plan.cpu = cpu_slot_;
  plan.several_groups = group.groups > 1;
  plan.group = group.member() ? &group.comm : nullptr;
  // Outside the timed loop, on one rank per node, at the same point of every rank's sequence.
  if (counters_ && nodes_.local_rank == 0) {
    const double start_us = now_us();
    counters_->before();
    counters_before_us_ = now_us() - start_us;
  }
  const Timing timing = time_op(world_, op, plan);
  CheckVerdict verdict;
  if (options_.check) verdict = check(op, timing.wrong_per_iteration, spec, group);
  if (options_.check && sink_) note_inexact_check(spec, group.group_size);
  // Every member, after the row's traffic: the path NCCL chose exists only once it connected.
  // With several groups, the slowest group's: the row's times are its (issue 34, defect 14).
  std::string path = bgroup ? bgroup->path() : "";
  if (plan.several_groups) path = world_.bcast_string_quiet(path, timing.slowest_group_rank);
  std::vector<CounterLine> moved = counter_lines(spec, group.scope);
  if (!sink_) return;

  Measurement m;
  m.op = std::string(name(spec.op));
  m.backend = std::string(backend_.name());
  m.scope = std::string(name(group.scope));
  m.path = path;
  m.dtype = std::string(name(spec.dtype));
  m.redop = is_reduction(spec.op) ? std::string(name(spec.redop)) : "";
  m.root = spec.root;
  m.nranks = is_pair_op(spec.op) ? 2 : group.group_size;
  m.groups = group.groups;
  m.bytes = spec.layout.bytes;
  m.count = spec.layout.count;
  m.in_place = spec.in_place;
  if (is_pair_op(spec.op)) {
    m.peer_a = spec.peer_a;
    m.peer_b = spec.peer_b;
  }
  m.time = time_stats(timing);
  // Two modes in the independent timings: a flapping link or an alternating
  // path, reported as such rather than averaged (core/modes.hpp). The debug
  // line is what calibrated the constants on steady curves.
  if (const auto split = split_modes(timing.sample_us)) {
    if (is_bimodal(*split)) m.modes = *split;
    spdlog::debug(
        "modes {} {} {} bytes: {:.1f}% at {:.2f} us, rest at {:.2f} us, ratio {:.2f}, separation {:.2f}, "
        "coverage {:.2f}",
        m.op, m.scope, m.bytes, 100 * split->low_share, split->low_us, split->high_us,
        split->high_us / std::max(split->low_us, 1e-9), split->separation, split->coverage);
  }
  if (plan.adaptive()) m.stopped_by = std::string(name(timing.stopped_by));
  m.algbw_gbps = algbw_gbps(spec.op, m.bytes, m.time.median_us);
  m.busbw_gbps = m.algbw_gbps * busbw_factor(spec.op, m.nranks);
  const auto slowest = std::max_element(timing.rank_lag_us.begin(), timing.rank_lag_us.end());
  if (slowest != timing.rank_lag_us.end() && *slowest >= 0) {
    const auto r = static_cast<std::size_t>(slowest - timing.rank_lag_us.begin());
    m.slowest_rank = static_cast<int>(r);
    m.slowest_rank_lag_us = *slowest;
    m.slowest_rank_mean_us = timing.rank_mean_us[r];
  }
  m.wrong = options_.check ? verdict.wrong : -1;
  m.wrong_ranks = std::move(verdict.ranks);
  m.wrong_at = std::move(verdict.at);
  m.pass = options_.duration_s > 0 ? totals_.passes : 0;
  if (options_.per_rank_times) {
    // Rounded to the nanosecond: the figure is a mean over iterations, and
    // short numbers keep a line per row small with many ranks.
    for (double us : timing.rank_mean_us) m.rank_mean_us.push_back(us < 0 ? -1.0 : std::round(us * 1e3) / 1e3);
  }
  sink_->measurement(m);
  for (const auto& line : moved) sink_->record_line(line);
  ++totals_.rows;
  totals_.busbw_sum_gbps += m.busbw_gbps;
}

}  // namespace fb
