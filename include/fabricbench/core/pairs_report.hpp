// What `fabricbench pairs` tells people and the record: the matrices as text,
// per-node summaries, findings in one sentence each, and the record's
// `pair`, `node` and `finding` lines (docs/results-schema.md).
#pragma once

#include <string>
#include <vector>

#include "fabricbench/core/pairs.hpp"
#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/scope.hpp"

namespace fb {

// Names for the positions of a selection.
struct PairsLabels {
  std::vector<int> nodes;          // node index (NodeMap) of each position
  std::vector<std::string> hosts;  // host name of each position
  PairsOptions options;
};

PairsLabels make_labels(const std::vector<int>& selection, const NodeMap& nodes, const PairsOptions& options);

PairLine pair_line(const PairMeasurement& m, const PairsLabels& labels);
std::vector<NodeLine> node_lines(const PairsResult& r, const PairsLabels& labels);
std::vector<FindingLine> finding_lines(const PairsResult& r, const PairsLabels& labels);
// The hosts of every node finding that fails the run, each once, in selection order.
std::vector<std::string> bad_hosts(const PairsResult& r, const PairsLabels& labels);

// One sentence: what is wrong, how sure, and what the retest said.
std::string describe(const Finding& f, const Analysis& a, const PairsLabels& labels);
// The matrices (unidir, bidir, latency), the node table and the findings of every rail.
std::string format_report(const PairsResult& r, const PairsLabels& labels);

}  // namespace fb
