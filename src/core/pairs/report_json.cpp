#include <set>

#include "fabricbench/core/pairs_report.hpp"

namespace fb {

PairsLabels make_labels(const std::vector<int>& selection, const NodeMap& nodes, const PairsOptions& options) {
  PairsLabels l;
  l.nodes = selection;
  for (int n : selection) l.hosts.push_back(nodes.node_hosts[static_cast<std::size_t>(n)]);
  l.options = options;
  return l;
}

PairLine pair_line(const PairMeasurement& m, const PairsLabels& l) {
  const auto a = static_cast<std::size_t>(m.job.pair.a);
  const auto b = static_cast<std::size_t>(m.job.pair.b);
  PairLine p;
  p.rail = m.job.rail;
  p.retest = m.retest;
  p.round = m.round;
  p.node_a = l.nodes[a];
  p.node_b = l.nodes[b];
  p.host_a = l.hosts[a];
  p.host_b = l.hosts[b];
  p.path = m.path;
  p.bytes = l.options.bytes;
  p.window = l.options.window;
  p.latency_bytes = l.options.latency_bytes;
  p.iterations = m.iterations;
  p.unidir_ab_gbps = m.figures.unidir_ab_gbps;
  p.unidir_ba_gbps = m.figures.unidir_ba_gbps;
  p.bidir_gbps = m.figures.bidir_gbps;
  p.latency_us = m.figures.latency_us;
  p.latency_p99_us = m.latency_p99_us;
  if (m.modes) p.modes = PairModes{*m.modes, m.modes_op};
  return p;
}

std::vector<NodeLine> node_lines(const PairsResult& r, const PairsLabels& l) {
  std::vector<NodeLine> out;
  for (int rail = 0; rail < r.rails; ++rail) {
    const Analysis& a = r.analyses[static_cast<std::size_t>(rail)];
    for (const NodeSummary& s : a.nodes) {
      const auto p = static_cast<std::size_t>(s.node);
      out.push_back({rail, l.nodes[p], l.hosts[p], s.links, s.low_links, s.unidir_median_gbps, s.unidir_min_gbps,
                     s.bidir_median_gbps, s.latency_median_us, s.suspect, s.node == a.reference_node});
    }
  }
  return out;
}

namespace {

const char* kind_name(Finding::Kind k) { return k == Finding::Kind::node ? "node" : "link"; }

}  // namespace

std::vector<FindingLine> finding_lines(const PairsResult& r, const PairsLabels& l) {
  std::vector<FindingLine> out;
  for (int rail = 0; rail < r.rails; ++rail) {
    const Analysis& a = r.analyses[static_cast<std::size_t>(rail)];
    for (const Finding& f : r.findings[static_cast<std::size_t>(rail)]) {
      FindingLine line;
      line.rail = rail;
      line.kind = kind_name(f.kind);
      if (f.kind == Finding::Kind::node) {
        line.node = l.nodes[static_cast<std::size_t>(f.node)];
        line.hosts.push_back(l.hosts[static_cast<std::size_t>(f.node)]);
        line.low_links = f.low_links;
        line.links = f.links;
      } else {
        line.node_a = l.nodes[static_cast<std::size_t>(f.link.a)];
        line.node_b = l.nodes[static_cast<std::size_t>(f.link.b)];
        line.hosts.push_back(l.hosts[static_cast<std::size_t>(f.link.a)]);
        line.hosts.push_back(l.hosts[static_cast<std::size_t>(f.link.b)]);
      }
      line.ratio = f.ratio;
      line.worst = f.worst;
      line.threshold = a.options.threshold;
      if (f.retested_against >= 0) {
        line.retested_against = l.hosts[static_cast<std::size_t>(f.retested_against)];
        line.retest_ratio = f.retest_ratio;
      }
      line.confirmed = f.confirmed;
      line.intermittent = f.intermittent();
      line.detail = describe(f, a, l);
      out.push_back(std::move(line));
    }
  }
  return out;
}

std::vector<std::string> bad_hosts(const PairsResult& r, const PairsLabels& l) {
  std::set<int> nodes;
  for (const auto& rail : r.findings)
    for (const Finding& f : rail)
      if (f.kind == Finding::Kind::node && !f.intermittent()) nodes.insert(f.node);
  std::vector<std::string> out;
  for (int n : nodes) out.push_back(l.hosts[static_cast<std::size_t>(n)]);
  return out;
}

}  // namespace fb
