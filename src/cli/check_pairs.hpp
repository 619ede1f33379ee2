// The node-pair matrix an acceptance profile asks for (`pairs:`), measured by
// `check` after its sweeps into the same record, so pairs rules judge the
// links of this job rather than skip.
#pragma once

#include <optional>
#include <string>

#include "fabricbench/accept/profile.hpp"
#include "fabricbench/backends/registry.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/pairs.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sink.hpp"

namespace fb::cli {

class CheckPairs {
 public:
  // Collective. Throws UsageError, alike on every rank, when the matrix
  // cannot run on these ranks (--rails on nodes with different rank counts,
  // a size below one float). A job on one node has no pairs: not_run() says so.
  CheckPairs(const Comm& world, const NodeMap& nodes, Backend& backend, const accept::PairsPlan& plan);

  // Why the matrix is not measured in this job; "" when it is.
  [[nodiscard]] const std::string& not_run() const { return not_run_; }

  // Collective: measures, analyses and retests as `fabricbench pairs` does;
  // rank 0 puts the pair, node and finding lines into the record.
  void run(RowSink& record);
  // Publish progress for the hang watchdog.
  void watch(ProgressBoard* board) {
    if (runner_) runner_->watch(board);
  }
  // Each node's leader reads these around every round (may be null).
  void count_errors(RowCounters* counters) {
    if (runner_) runner_->count_errors(counters);
  }

 private:
  const NodeMap& nodes_;
  PairsOptions options_;
  std::optional<PairsRunner> runner_;
  std::string not_run_;
};

}  // namespace fb::cli
