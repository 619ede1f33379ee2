#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <charconv>
#include <cstdint>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/modes.hpp"
#include "fabricbench/core/op_desc.hpp"
#include "fabricbench/core/pairs.hpp"
#include "fabricbench/core/stats.hpp"

namespace fb {
namespace {

// What each pair sends back to every rank after its round, as doubles so one
// quiet reduction carries them: a pair's slot is zero on every other rank.
// kFieldModes*: the first of the pair's measurements whose times fell into two
// modes (kFieldModesOp: its index in kModesOps, -1 for none), core/modes.hpp.
enum Field {
  kValid,
  kUnidirAB,
  kUnidirBA,
  kBidir,
  kLatency,
  kLatencyP99,
  kIterations,
  kFieldModesOp,
  kFieldModesLow,
  kFieldModesHigh,
  kFieldModesShare,
  kFieldModesSeparation,
  kFields
};
// The pair line's names of its measurements, in the order they are timed.
constexpr std::array<const char*, 4> kModesOps{"unidir_ab", "unidir_ba", "bidir", "latency"};

// "job:path", so rank 0 can tell which pair a path belongs to.
std::pair<int, std::string> split_path(const std::string& text) {
  const auto colon = text.find(':');
  int job = -1;
  if (colon != std::string::npos) std::from_chars(text.data(), text.data() + colon, job);
  return {job, colon == std::string::npos ? std::string() : text.substr(colon + 1)};
}

}  // namespace

std::size_t PairsResult::finding_count() const {
  std::size_t n = 0;
  for (const auto& f : findings) n += f.size();
  return n;
}

std::size_t PairsResult::failing_count() const {
  std::size_t n = 0;
  for (const auto& rail : findings)
    n += static_cast<std::size_t>(std::count_if(rail.begin(), rail.end(), [](const Finding& f) { return !f.intermittent(); }));
  return n;
}

PairsRunner::PairsRunner(const Comm& world, const NodeMap& nodes, Backend& backend, const PairsOptions& options)
    : world_(world), nodes_(nodes), backend_(backend), options_(options) {
  selection_ = options.nodes;
  if (selection_.empty())
    for (int n = 0; n < nodes.nodes; ++n) selection_.push_back(n);
  rails_ = options.rails ? nodes.local_size : 1;
  my_rail_ = options.rails ? nodes.local_rank : (nodes.local_rank == 0 ? 0 : -1);
  const auto at = std::find(selection_.begin(), selection_.end(), nodes.node);
  if (my_rail_ >= 0 && at != selection_.end()) my_position_ = static_cast<int>(at - selection_.begin());
}

OpSpec PairsRunner::spec(Op op, std::uint64_t bytes, int from, int to) const {
  OpSpec s;
  s.op = op;
  s.dtype = Dtype::float32;  // as `run`'s point-to-point rows, so the figures compare
  s.layout = layout_for(op, s.dtype, bytes, 2);
  s.peer_a = from;
  s.peer_b = to;
  s.window = options_.window;
  return s;
}

void PairsRunner::preflight() const {
  // Where each rank runs, as every measuring command places it: with --rails
  // each local rank on its own GPU (and so its own NIC), not all on GPU 0.
  set_up_backend(world_, backend_, RunOptions{});
  if (selection_.size() < 2)
    throw UsageError(nodes_.nodes < 2
                         ? fmt::format("the job runs on one node ({}): pairs needs ranks on at least two nodes, e.g. "
                                       "mpirun --map-by ppr:1:node over a hostfile of the nodes (to try it on one "
                                       "machine, take each local rank as a node: mpirun -x "
                                       "FABRICBENCH_RANKS_PER_NODE=1)",
                                       nodes_.node_hosts.front())
                         : "--nodes: select at least two nodes");
  if (options_.rails && !nodes_.uniform)
    throw UsageError("--rails: the nodes have different rank counts; launch the same number of ranks (one per GPU) "
                     "on every node");
  for (const OpSpec& s : {spec(Op::unidir, options_.bytes, 0, 1), spec(Op::bidir, options_.bytes, 0, 1),
                          spec(Op::pingpong, options_.latency_bytes, 0, 1)}) {
    if (s.layout.block == 0)
      throw UsageError(fmt::format("{} B is less than one float; give --size and --latency-size of 4 B or more",
                                   s.op == Op::pingpong ? options_.latency_bytes : options_.bytes));
    const Support support = support_for(backend_, s);
    if (!support.ok) throw UsageError(fmt::format("backend {} cannot run {}: {}", backend_.name(), name(s.op), support.why));
  }
  const std::uint64_t buffer = std::max(options_.bytes, options_.latency_bytes);
  const Support fit = backend_.fits(2 * buffer, rails_);
  const std::string refusal = agree_on_error(world_, fit.ok ? "" : fit.why);
  if (!refusal.empty()) throw UsageError(refusal);
}

namespace {

// Watchdog step numbers: each round, and each op of a pair inside it, starts
// at a number every rank agrees on, however many batches the pairs before
// it took (see ProgressBoard::enter_at).
constexpr std::int64_t kStepsPerOp = std::int64_t{1} << 20;
constexpr std::int64_t kStepsPerRound = 8 * kStepsPerOp;

}  // namespace

bool PairsRunner::measure_my_pair(const Comm& pair, std::vector<double>& fields, std::string& path) {
  const std::int64_t round_base = rounds_started_ * kStepsPerRound;
  std::int64_t op_index = 0;
  std::unique_ptr<BackendGroup> group;
  const OpeningBackend opening(board_, &backend_);  // a hang in NCCL's split can be aborted
  group = backend_.open(pair);
  // The watchdog may abort the group from here on (NCCL: ncclCommAbort), reserve() included: it takes the open's
  // place on the board with no moment between.
  const ActiveGroup active(board_, group.get());
  const std::uint64_t buffer = std::max(options_.bytes, options_.latency_bytes);
  group->reserve(buffer, buffer);
  std::size_t fewest = SIZE_MAX;
  std::optional<TwoModes> modes;
  int modes_op = -1, timed = 0;
  auto time = [&](const OpSpec& s) {
    auto op = group->prepare(s);
    label_op(board_, s, *op, -1);
    if (board_) board_->enter_at(Phase::setup, round_base + ++op_index * kStepsPerOp);
    // The op's agreed figures, for the adaptive stop's byte and time caps (as `run` sets them).
    TimingPlan plan = options_.timing;
    plan.bytes = s.layout.bytes;
    plan.ops_per_iteration = ops_per_iteration(s);
    plan.in_step = op_desc(s.op).answered;
    plan.times_count = times_count(s, pair.rank());
    const Timing timing = time_op(pair, op.get(), plan);
    if (!modes)
      if ((modes = find_two_modes(timing.sample_us))) modes_op = timed;
    ++timed;
    const TimeStats t = time_stats(timing);
    fewest = std::min(fewest, t.iterations);
    return t;
  };
  const TimeStats ab = time(spec(Op::unidir, options_.bytes, 0, 1));
  const TimeStats ba = time(spec(Op::unidir, options_.bytes, 1, 0));
  const TimeStats bi = time(spec(Op::bidir, options_.bytes, 0, 1));
  const TimeStats lat = time(spec(Op::pingpong, options_.latency_bytes, 0, 1));
  // After the traffic: NCCL connects a pair at its first send, not at communicator creation.
  path = group->path();
  const std::uint64_t bytes = spec(Op::unidir, options_.bytes, 0, 1).layout.bytes;
  fields.assign(kFields, 0.0);
  fields[kValid] = 1;
  fields[kUnidirAB] = algbw_gbps(Op::unidir, bytes, ab.median_us);
  fields[kUnidirBA] = algbw_gbps(Op::unidir, bytes, ba.median_us);
  fields[kBidir] = algbw_gbps(Op::bidir, bytes, bi.median_us);
  fields[kLatency] = lat.median_us;
  fields[kLatencyP99] = lat.p99_us;
  fields[kIterations] = static_cast<double>(fewest);
  fields[kFieldModesOp] = modes_op;
  if (modes) {
    fields[kFieldModesLow] = modes->low_us;
    fields[kFieldModesHigh] = modes->high_us;
    fields[kFieldModesShare] = modes->low_share;
    fields[kFieldModesSeparation] = modes->separation;
  }
  return pair.rank() == 0;
}

// Collective: the moves of the leaders whose node measured a pair this
// round (`read`: this rank is such a leader and took the snapshot before),
// on rank 0, each line's row the index of its node's pair within `jobs`.
std::vector<CounterLine> PairsRunner::round_counters(const std::vector<PairJob>& jobs, bool read) {
  if (!counters_) return {};
  // A pair is two nodes: its traffic always leaves the node.
  std::vector<CounterLine> lines = gather_counter_moves(
      world_, nodes_, read ? counters_->after() : std::vector<CounterMove>{}, {true, backend_.on_gpus()});
  for (CounterLine& l : lines) {
    l.op = kPairsCounterOp;
    l.scope = std::string(name(options_.rails ? Scope::rail : Scope::inter));
    l.bytes = options_.bytes;
    for (std::size_t k = 0; k < jobs.size(); ++k)
      if (selection_[static_cast<std::size_t>(jobs[k].pair.a)] == l.node ||
          selection_[static_cast<std::size_t>(jobs[k].pair.b)] == l.node) {
        l.row = k;
        break;
      }
  }
  return lines;
}

std::vector<PairMeasurement> PairsRunner::measure_round(const std::vector<PairJob>& jobs,
                                                        std::vector<CounterLine>& moved) {
  int my_job = -1;
  int key = 0;
  for (std::size_t k = 0; k < jobs.size() && my_position_ >= 0; ++k) {
    const PairJob& j = jobs[k];
    if (j.rail != my_rail_ || (j.pair.a != my_position_ && j.pair.b != my_position_)) continue;
    my_job = static_cast<int>(k);
    key = j.pair.a == my_position_ ? 0 : 1;  // the pair's rank 0 is node a
  }
  ++rounds_started_;
  // A node's leader reads its counters around the round when its node has a pair in it.
  const bool read_counters = counters_ && nodes_.local_rank == 0 && my_job >= 0;
  if (read_counters) counters_->before();
  const Comm pair = world_.split(my_job, key);
  std::vector<double> all(jobs.size() * kFields, 0.0);
  std::string my_path;
  if (pair.valid()) {
    std::vector<double> mine;
    if (measure_my_pair(pair, mine, my_path))
      std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(my_job * kFields));
    else
      my_path.clear();
  } else {
    const OpeningBackend opening(board_, &backend_);
    backend_.skip_open();  // this round's pairs may be split from one world communicator
  }
  // Ranks that sat the round out wait here, sleeping between polls.
  if (board_) board_->enter_at(Phase::sync, (rounds_started_ + 1) * kStepsPerRound - 1);
  world_.allreduce_sum_quiet(all);
  const auto paths = world_.allgather_strings(my_path.empty() ? "" : fmt::format("{}:{}", my_job, my_path));
  moved = round_counters(jobs, read_counters);

  std::vector<PairMeasurement> out(jobs.size());
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const double* f = &all[k * kFields];
    if (f[kValid] != 1) throw RunError(fmt::format("pair {}-{} reported no figures", jobs[k].pair.a, jobs[k].pair.b));
    out[k].job = jobs[k];
    out[k].figures = {f[kUnidirAB], f[kUnidirBA], f[kBidir], f[kLatency]};
    out[k].latency_p99_us = f[kLatencyP99];
    out[k].iterations = static_cast<std::size_t>(f[kIterations]);
    if (const auto which = static_cast<int>(f[kFieldModesOp]);
        which >= 0 && which < static_cast<int>(kModesOps.size())) {
      out[k].modes = TwoModes{f[kFieldModesLow], f[kFieldModesHigh], f[kFieldModesShare], f[kFieldModesSeparation]};
      out[k].modes_op = kModesOps[static_cast<std::size_t>(which)];
    }
  }
  for (const auto& text : paths) {
    const auto [job, path] = split_path(text);
    if (job >= 0 && static_cast<std::size_t>(job) < out.size()) out[static_cast<std::size_t>(job)].path = path;
  }
  return out;
}

std::vector<PairMeasurement> PairsRunner::measure(const std::vector<std::vector<PairJob>>& rounds, bool retest,
                                                  PairsObserver* observer) {
  std::vector<PairMeasurement> out;
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    std::vector<CounterLine> moved;
    const std::size_t first = told_;
    for (auto& m : measure_round(rounds[r], moved)) {
      m.round = static_cast<int>(r);
      m.retest = retest;
      if (observer && world_.rank() == 0) observer->pair(m);
      out.push_back(std::move(m));
      ++told_;
    }
    for (CounterLine& l : moved) {
      l.row += first;
      if (observer && world_.rank() == 0) observer->counter(l);
    }
    if (observer && world_.rank() == 0) observer->round_done(static_cast<int>(r) + 1, static_cast<int>(rounds.size()), retest);
  }
  return out;
}

PairsResult PairsRunner::run(PairsObserver* observer) {
  PairsResult res;
  res.nodes = selection_;
  res.rails = rails_;
  const int n = static_cast<int>(selection_.size());
  const auto rounds = rounds_on_rails(n, rails_);
  res.rounds = static_cast<int>(rounds.size());
  res.measured = measure(rounds, false, observer);

  res.matrices.assign(static_cast<std::size_t>(rails_), LinkMatrix(n));
  for (const auto& m : res.measured) res.matrices[static_cast<std::size_t>(m.job.rail)].set(m.job.pair.a, m.job.pair.b, m.figures);
  std::vector<PairJob> again;
  for (int rail = 0; rail < rails_; ++rail) {
    res.analyses.push_back(analyse(res.matrices[static_cast<std::size_t>(rail)], options_.analysis));
    for (const NodePair& p : retest_pairs(res.analyses.back())) again.push_back({rail, p});
  }

  // Every rank computed the same analysis from the same reduced figures, so
  // every rank agrees on the retests without another message.
  const auto retest_rounds = pack_rounds(again);
  res.retest_rounds = static_cast<int>(retest_rounds.size());
  std::vector<LinkMatrix> retests(static_cast<std::size_t>(rails_), LinkMatrix(n));
  for (auto& m : measure(retest_rounds, true, observer)) {
    retests[static_cast<std::size_t>(m.job.rail)].set(m.job.pair.a, m.job.pair.b, m.figures);
    res.measured.push_back(std::move(m));
  }
  for (int rail = 0; rail < rails_; ++rail)
    res.findings.push_back(localise(res.analyses[static_cast<std::size_t>(rail)], retests[static_cast<std::size_t>(rail)]));
  return res;
}

}  // namespace fb
