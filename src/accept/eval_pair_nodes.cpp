// Pairs rules across nodes: a node's figure is the median of its links in the
// matrix, judged against the median of the other nodes' figures (of its
// rail), or against an absolute bound. A node whose own port is slow drags
// every one of its links down and stands out alone; the far ends of those
// links keep their good links to the rest, so their medians stay normal.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "eval_parts.hpp"
#include "fabricbench/core/stats.hpp"

namespace fb::accept {
namespace {

// Fewer nodes cannot tell a node from its peer: two nodes share their one link.
constexpr std::size_t kMinNodes = 3;

struct NodeFigure {
  int rail = 0;
  int node = -1;
  std::string host;
  std::vector<double> links;  // the figures of its links
  double value = 0;           // their median
  double reference = 0;       // the median of the other nodes' values on its rail
};

// One entry per rail and node of the matrix, in rail and node order.
std::vector<NodeFigure> node_figures(const Results& run, PairMetric metric) {
  std::map<std::pair<int, int>, NodeFigure> nodes;
  for (const auto& line : run.pairs) {
    if (line.retest) continue;  // retests are not part of the matrix (as in eval_pairs)
    const auto figure = pair_figure(line, metric);
    if (!figure) continue;
    for (int end = 0; end < 2; ++end) {
      const int n = end == 0 ? line.node_a : line.node_b;
      NodeFigure& f = nodes[{line.rail, n}];
      f.rail = line.rail;
      f.node = n;
      f.host = end == 0 ? line.host_a : line.host_b;
      f.links.push_back(*figure);
    }
  }
  std::vector<NodeFigure> out;
  for (auto& entry : nodes) {
    entry.second.value = median_of(entry.second.links);
    out.push_back(std::move(entry.second));
  }
  return out;
}

// Keeps the rails with enough nodes to judge and sets each node's reference.
std::vector<NodeFigure> judgeable(std::vector<NodeFigure> nodes) {
  std::map<int, std::size_t> per_rail;
  for (const auto& n : nodes) ++per_rail[n.rail];
  std::erase_if(nodes, [&](const NodeFigure& n) { return per_rail[n.rail] < kMinNodes; });
  for (auto& n : nodes) {
    std::vector<double> others;
    for (const auto& o : nodes)
      if (o.rail == n.rail && o.node != n.node) others.push_back(o.value);
    n.reference = median_of(others);
  }
  return nodes;
}

std::string node_label(const NodeFigure& n, const std::string& unit, bool relative) {
  const std::string where = fmt::format("{} (node {}{})", n.host, n.node, n.rail > 0 ? fmt::format(", rail {}", n.rail) : "");
  if (!relative) return fmt::format("{} {} over {} links", where, figure(n.value, unit), n.links.size());
  return fmt::format("{} {} = {:.2f}x the others' {}", where, figure(n.value, unit), n.value / n.reference,
                     figure(n.reference, unit));
}

}  // namespace

Verdict eval_pair_nodes(const Rule& rule, const Results& run) {
  const bool any = std::any_of(run.pairs.begin(), run.pairs.end(), [](const PairLine& l) { return !l.retest; });
  if (!any) return skipped(rule, "no pair lines in this run");
  const std::vector<NodeFigure> all = node_figures(run, rule.pair_metric);
  const std::vector<NodeFigure> nodes = judgeable(all);
  if (nodes.empty())
    return skipped(rule, fmt::format("the matrix has {} node(s) with {} figures: judging a node against the others "
                                     "needs {} or more (two nodes share their one link; judge it across: links)",
                                     all.size(), name(rule.pair_metric), kMinNodes));
  const Limit& limit = rule.limits.front();
  const bool relative = limit.reference == Reference::median;
  for (const auto& n : nodes)
    if (relative && n.reference <= 0)
      return skipped(rule, fmt::format("the other nodes' median {} against {} is 0", name(rule.pair_metric), n.host));
  const bool low_is_bad = limit.bound == Bound::min;
  auto score = [relative](const NodeFigure& n) { return relative ? n.value / n.reference : n.value; };
  const auto worst = std::min_element(nodes.begin(), nodes.end(), [&](const NodeFigure& x, const NodeFigure& y) {
    return low_is_bad ? score(x) < score(y) : score(x) > score(y);
  });
  const std::string unit = rule.pair_metric == PairMetric::latency ? "us" : "GB/s";
  Verdict v = start_verdict(rule);
  std::string bad;
  int listed = 0;
  for (const auto& n : nodes) {
    if (low_is_bad ? score(n) >= limit.value : score(n) <= limit.value) continue;
    v.offenders.push_back({n.host, -1, "", n.value, unit});
    if (listed++ < 8) bad += fmt::format("{}{}", bad.empty() ? "" : "; ", node_label(n, unit, relative));
  }
  v.unit = relative ? "x median" : unit;
  judge(v, limit.bound, score(*worst), limit.value, limit.text);
  v.reason = fmt::format("each node's median link over {} nodes; {}", nodes.size(),
                         bad.empty() ? "worst " + node_label(*worst, unit, relative)
                                     : fmt::format("{} nodes beyond the bound: {}", v.offenders.size(), bad));
  return v;
}

}  // namespace fb::accept
