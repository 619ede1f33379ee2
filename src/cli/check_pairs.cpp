#include "check_pairs.hpp"

#include <fmt/format.h>

#include "fabricbench/core/pairs_report.hpp"

namespace fb::cli {
namespace {

// Rank 0: each pair into the record as its round ends, synced per round.
class RecordLines final : public PairsObserver {
 public:
  RecordLines(RowSink& record, const PairsLabels& labels) : record_(record), labels_(labels) {}
  void pair(const PairMeasurement& m) override { record_.record_line(pair_line(m, labels_)); }
  void round_done(int, int, bool) override { record_.size_done(); }
  void counter(const CounterLine& line) override { record_.record_line(line); }

 private:
  RowSink& record_;
  const PairsLabels& labels_;
};

}  // namespace

CheckPairs::CheckPairs(const Comm& world, const NodeMap& nodes, Backend& backend, const accept::PairsPlan& plan)
    : nodes_(nodes) {
  options_.bytes = plan.size_bytes;
  options_.timing.iters = plan.iters;
  options_.timing.budget_s = plan.time_budget_s;
  options_.rails = plan.rails;
  if (nodes.nodes < 2) {
    not_run_ = fmt::format("the job runs on one node ({}): there are no node pairs to measure",
                           nodes.node_hosts.empty() ? "?" : nodes.node_hosts.front());
    return;
  }
  runner_.emplace(world, nodes, backend, options_);
  runner_->preflight();
}

void CheckPairs::run(RowSink& record) {
  if (!runner_) return;
  const PairsLabels labels = make_labels(runner_->selection(), nodes_, options_);
  RecordLines observer(record, labels);
  const PairsResult result = runner_->run(&observer);
  for (const auto& line : node_lines(result, labels)) record.record_line(line);
  for (const auto& line : finding_lines(result, labels)) record.record_line(line);
  record.size_done();
}

}  // namespace fb::cli
