// The sweep engine: for every scope, op, size and placement, prepare the op on
// the backend, time it with every rank in step, optionally check its output,
// and hand a row to the sinks on rank 0. Knows nothing of CUDA or NCCL.
#pragma once

#include <cstdint>
#include <vector>

#include "fabricbench/backends/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/plan.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sink.hpp"

namespace fb {

struct RunTotals {
  std::size_t rows = 0;
  std::size_t skipped = 0;
  std::int64_t wrong = 0;  // wrong elements over every checked row
  double busbw_sum_gbps = 0;  // for nccl-tests' "Avg bus bandwidth" line
};

class Runner {
 public:
  // `sink` is used on rank 0 only and may be null elsewhere.
  Runner(const Comm& world, const NodeMap& nodes, Backend& backend, const RunOptions& options, RowSink* sink);
  // Collective, before anything is printed or measured: throws UsageError, on
  // every rank alike, when the backend supports none of the plan or its
  // buffers will not fit in some node's memory.
  void preflight() const;
  RunTotals run();

 private:
  void run_scope(Scope scope);
  void run_op(const ScopeGroup& group, BackendGroup* bgroup, Op op);
  void measure(const ScopeGroup& group, BackendGroup* bgroup, const OpSpec& spec);
  void skip(const ScopeGroup& group, const OpSpec& spec, std::uint64_t bytes, const std::string& reason);
  std::uint64_t largest_buffer_bytes(int group_size) const;
  OpSpec spec_for(Op op, bool in_place, std::uint64_t bytes, int group_size) const;

  const Comm& world_;
  const NodeMap& nodes_;
  Backend& backend_;
  RunOptions options_;
  RowSink* sink_;
  std::vector<std::uint64_t> sizes_;
  RunTotals totals_;
};

}  // namespace fb
