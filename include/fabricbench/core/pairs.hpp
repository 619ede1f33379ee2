// `fabricbench pairs`: every pair of nodes measured in rounds of disjoint
// pairs at once (pair_schedule.hpp), each pair on a two-rank communicator
// through the backend's own point-to-point ops and the engine's timed loop;
// then the analysis (link_analysis.hpp) and the retests it asks for.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/modes.hpp"
#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/link_analysis.hpp"
#include "fabricbench/core/pair_schedule.hpp"
#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/row_counters.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/timing.hpp"

namespace fb {

struct PairsOptions {
  std::uint64_t bytes = 16ull << 20;  // --size: unidir and bidir message size
  std::uint64_t latency_bytes = 8;    // --latency-size: ping-pong size
  int window = 8;                     // messages in flight per bandwidth iteration
  TimingPlan timing{10, 2, 0};        // --iters, --warmup_iters, --time-budget (per measurement)
  bool rails = false;                 // one rank per local rank (GPU-NIC rail) instead of per node
  std::vector<int> nodes;             // node indices (NodeMap) to pair, in order; empty = all
  AnalysisOptions analysis;
  double timeout_s = -1;              // --timeout: the hang watchdog's limit (< 0 automatic, 0 none)
};

// The nodes a selection names: host names or node indices and ranges
// ("fb1,fb3", "0-7,12"), in the NodeMap's order, without repeats. Throws
// UsageError naming what is unknown and what is known.
std::vector<int> select_nodes(const std::vector<std::string>& specs, const std::vector<std::string>& hosts);

// One measured pair. `a`, `b` are positions in the selection.
struct PairMeasurement {
  PairJob job;
  int round = 0;        // within its phase
  bool retest = false;  // measured again after the analysis
  LinkFigures figures;
  double latency_p99_us = 0;
  std::size_t iterations = 0;  // the fewest timed iterations of its four measurements
  std::string path;            // the backend's path for this pair
  // The first of its measurements whose times fell into two modes
  // (core/modes.hpp), and which: unidir_ab, unidir_ba, bidir or latency.
  std::optional<TwoModes> modes;
  std::string modes_op;
};

// The op of a counters line read around a pairs round; its row is the
// index of its node's pair among the record's pair lines.
inline constexpr const char* kPairsCounterOp = "pairs";

// Told, on rank 0, of each pair as soon as its round is over.
class PairsObserver {
 public:
  virtual ~PairsObserver() = default;
  virtual void pair(const PairMeasurement& m) = 0;
  virtual void round_done(int done, int total, bool retest) = 0;
  // An error counter that moved on a node while it measured its pair of
  // that round: `row` is that pair's index among the pairs told so far.
  virtual void counter(const CounterLine& line) = 0;
};

struct PairsResult {
  std::vector<int> nodes;  // node indices of the selection
  int rails = 1;
  std::vector<LinkMatrix> matrices;  // per rail
  std::vector<Analysis> analyses;    // per rail
  std::vector<std::vector<Finding>> findings;  // per rail
  std::vector<PairMeasurement> measured;       // the schedule's pairs, then the retests
  int rounds = 0;                               // schedule rounds (retests not counted)
  int retest_rounds = 0;
  std::size_t finding_count() const;
  // Findings a retest did not clear: these fail the run (exit code 1).
  std::size_t failing_count() const;
};

class PairsRunner {
 public:
  // Collective. `observer` is used on rank 0 only and may be null.
  PairsRunner(const Comm& world, const NodeMap& nodes, Backend& backend, const PairsOptions& options);
  // Collective: UsageError, on every rank alike, when the backend cannot run
  // the ops or the buffers do not fit; or the layout does not allow --rails.
  void preflight() const;
  int rails() const { return rails_; }
  const std::vector<int>& selection() const { return selection_; }
  // Collective: measure, analyse, retest, localise. Identical on every rank.
  PairsResult run(PairsObserver* observer);
  // Publish each pair's ops and iterations for the hang watchdog (may be null).
  void watch(ProgressBoard* board) {
    board_ = board;
    options_.timing.board = board;
  }
  // Each node's leader reads these around every round it takes part in (may be null).
  void count_errors(RowCounters* counters) { counters_ = counters; }

 private:
  std::vector<PairMeasurement> measure(const std::vector<std::vector<PairJob>>& rounds, bool retest,
                                       PairsObserver* observer);
  std::vector<PairMeasurement> measure_round(const std::vector<PairJob>& jobs, std::vector<CounterLine>& moved);
  std::vector<CounterLine> round_counters(const std::vector<PairJob>& jobs, bool read);
  bool measure_my_pair(const Comm& pair, std::vector<double>& fields, std::string& path);
  OpSpec spec(Op op, std::uint64_t bytes, int from, int to) const;

  const Comm& world_;
  // A copy: callers pass map_nodes(world) as a temporary, and a reference
  // to it dangled (counter lines read host names from freed memory).
  const NodeMap nodes_;
  Backend& backend_;
  PairsOptions options_;
  std::vector<int> selection_;
  int rails_ = 1;
  int my_position_ = -1;  // this rank's node in the selection, -1 when it sits out
  int my_rail_ = -1;
  ProgressBoard* board_ = nullptr;
  std::int64_t rounds_started_ = 0;  // every rank counts every round, retests too
  RowCounters* counters_ = nullptr;
  std::size_t told_ = 0;  // pairs measured so far, retests too: the record's pair line index
};

}  // namespace fb
