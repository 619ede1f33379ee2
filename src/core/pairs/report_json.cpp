#include <set>

#include "fabricbench/core/pairs_report.hpp"

namespace fb {

using json = nlohmann::ordered_json;

PairsLabels make_labels(const std::vector<int>& selection, const NodeMap& nodes, const PairsOptions& options) {
  PairsLabels l;
  l.nodes = selection;
  for (int n : selection) l.hosts.push_back(nodes.node_hosts[static_cast<std::size_t>(n)]);
  l.options = options;
  return l;
}

json pair_line(const PairMeasurement& m, const PairsLabels& l) {
  const auto a = static_cast<std::size_t>(m.job.pair.a);
  const auto b = static_cast<std::size_t>(m.job.pair.b);
  return {
      {"type", "pair"},
      {"rail", m.job.rail},
      {"retest", m.retest},
      {"round", m.round},
      {"node_a", l.nodes[a]},
      {"node_b", l.nodes[b]},
      {"host_a", l.hosts[a]},
      {"host_b", l.hosts[b]},
      {"path", m.path},
      {"bytes", l.options.bytes},
      {"window", l.options.window},
      {"latency_bytes", l.options.latency_bytes},
      {"iterations", m.iterations},
      {"unidir_ab_gbps", m.figures.unidir_ab_gbps},
      {"unidir_ba_gbps", m.figures.unidir_ba_gbps},
      {"bidir_gbps", m.figures.bidir_gbps},
      {"latency_us", m.figures.latency_us},
      {"latency_p99_us", m.latency_p99_us},
  };
}

std::vector<json> node_lines(const PairsResult& r, const PairsLabels& l) {
  std::vector<json> out;
  for (int rail = 0; rail < r.rails; ++rail) {
    const Analysis& a = r.analyses[static_cast<std::size_t>(rail)];
    for (const NodeSummary& s : a.nodes) {
      const auto p = static_cast<std::size_t>(s.node);
      out.push_back({{"type", "node"},
                     {"rail", rail},
                     {"node", l.nodes[p]},
                     {"host", l.hosts[p]},
                     {"links", s.links},
                     {"low_links", s.low_links},
                     {"unidir_median_gbps", s.unidir_median_gbps},
                     {"unidir_min_gbps", s.unidir_min_gbps},
                     {"bidir_median_gbps", s.bidir_median_gbps},
                     {"latency_median_us", s.latency_median_us},
                     {"suspect", s.suspect},
                     {"reference_node", s.node == a.reference_node}});
    }
  }
  return out;
}

namespace {

const char* kind_name(Finding::Kind k) { return k == Finding::Kind::node ? "node" : "link"; }

}  // namespace

std::vector<json> finding_lines(const PairsResult& r, const PairsLabels& l) {
  std::vector<json> out;
  for (int rail = 0; rail < r.rails; ++rail) {
    const Analysis& a = r.analyses[static_cast<std::size_t>(rail)];
    for (const Finding& f : r.findings[static_cast<std::size_t>(rail)]) {
      json j = {{"type", "finding"}, {"rail", rail}, {"kind", kind_name(f.kind)}};
      std::vector<std::string> hosts;
      if (f.kind == Finding::Kind::node) {
        j["node"] = l.nodes[static_cast<std::size_t>(f.node)];
        hosts.push_back(l.hosts[static_cast<std::size_t>(f.node)]);
        j["low_links"] = f.low_links;
        j["links"] = f.links;
      } else {
        j["node_a"] = l.nodes[static_cast<std::size_t>(f.link.a)];
        j["node_b"] = l.nodes[static_cast<std::size_t>(f.link.b)];
        hosts.push_back(l.hosts[static_cast<std::size_t>(f.link.a)]);
        hosts.push_back(l.hosts[static_cast<std::size_t>(f.link.b)]);
      }
      j["hosts"] = hosts;
      j["ratio"] = f.ratio;
      j["worst"] = f.worst;
      j["threshold"] = a.options.threshold;
      j["retested_against"] =
          f.retested_against >= 0 ? json(l.hosts[static_cast<std::size_t>(f.retested_against)]) : json(nullptr);
      j["retest_ratio"] = f.retested_against >= 0 ? json(f.retest_ratio) : json(nullptr);
      j["confirmed"] = f.confirmed;
      j["intermittent"] = f.intermittent();
      j["detail"] = describe(f, a, l);
      out.push_back(std::move(j));
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
