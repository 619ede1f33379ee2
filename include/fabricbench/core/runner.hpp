// The sweep engine: for every scope, op, size and placement, prepare the op on
// the backend, time it with every rank in step, optionally check its output,
// and hand a row to the sinks on rank 0. Knows nothing of CUDA or NCCL.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/cpu_pin.hpp"
#include "fabricbench/core/plan.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/row_counters.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sink.hpp"

namespace fb {

struct CheckVerdict;  // wrong elements of one row (src/core/wrong_counts.hpp)

struct RunTotals {
  std::size_t rows = 0;
  std::size_t skipped = 0;
  std::int64_t wrong = 0;  // wrong elements over every checked row
  std::vector<std::int64_t> wrong_by_rank;  // the same per world rank (checked runs)
  double busbw_sum_gbps = 0;  // for nccl-tests' "Avg bus bandwidth" line
  int passes = 0;             // sweeps begun (more than one with --duration)

  // Another sweep's totals added (check runs several into one record).
  RunTotals& operator+=(const RunTotals& other);
  // The closing line's totals: `checked` when any sweep verified its
  // results (else wrong is -1, "not checked"), `burn_in` when any ran for a
  // --duration (then the passes count).
  SweepTotals closing(bool checked, bool burn_in) const;
};

class Runner {
 public:
  // `sink` is used on rank 0 only and may be null elsewhere.
  Runner(const Comm& world, const NodeMap& nodes, Backend& backend, const RunOptions& options, RowSink* sink);
  // Collective, before anything is printed or measured: throws UsageError, on
  // every rank alike, when the backend supports none of the plan or its
  // buffers will not fit in some node's memory.
  void preflight() const;
  // Publish progress for the watchdog (optional; before run()).
  void watch(ProgressBoard* board) { board_ = board; }
  // Error counters read around each row by each node's leader (optional;
  // before run(), on every rank or on none: each row then gathers the moves).
  void count_errors(RowCounters* counters) { counters_ = counters; }
  // The NVLink domain key of every world rank (NodeMap::rank_domain; the
  // same on every rank), for the domain scope (optional; before run()).
  void nvlink_domains(std::vector<std::string> rank_domain) { nodes_.rank_domain = std::move(rank_domain); }
  // One sweep, or with options.duration_s sweeps until that much time is spent.
  RunTotals run();

 private:
  void run_scope(Scope scope);
  void run_op(const ScopeGroup& group, BackendGroup* bgroup, Op op);
  void measure(const ScopeGroup& group, BackendGroup* bgroup, const OpSpec& spec);
  // The check's verdict for this row (collective); `per_iteration` from --check all.
  CheckVerdict check(PreparedOp* op, const std::vector<std::int64_t>& per_iteration, const OpSpec& spec,
                     const ScopeGroup& group);
  void enter(Phase phase);
  // Collective: the counters that moved on any node during the row, for
  // rank 0's record (empty elsewhere, and when no counters are read).
  std::vector<CounterLine> counter_lines(const OpSpec& spec, Scope scope);
  // Collective: has the --duration been spent? (rank 0's clock decides)
  bool out_of_time();
  void skip(const ScopeGroup& group, const OpSpec& spec, std::uint64_t bytes, const std::string& reason);
  // Rank 0, once per op, datatype, reduction and rank count: a check that cannot be exact says so.
  void note_inexact_check(const OpSpec& spec, int nranks);
  std::uint64_t largest_buffer_bytes(int group_size) const;
  OpSpec spec_for(Op op, bool in_place, std::uint64_t bytes, int group_size) const;

  const Comm& world_;
  // A copy: callers pass map_nodes(world) as a temporary, and a reference
  // to it dangled (counter lines read host names from freed memory).
  NodeMap nodes_;
  Backend& backend_;
  RunOptions options_;
  RowSink* sink_;
  std::vector<std::uint64_t> sizes_;
  RunTotals totals_;
  ProgressBoard* board_ = nullptr;
  RowCounters* counters_ = nullptr;
  double counters_before_us_ = 0;  // the last row's snapshot before, for the debug log's cost
  double started_us_ = 0;
  bool stopped_ = false;  // the duration is spent: no more measurements
  std::set<std::string> inexact_noted_;
  CpuSlot cpu_slot_;      // this rank's place on its machine, for the timed loops
};

}  // namespace fb
