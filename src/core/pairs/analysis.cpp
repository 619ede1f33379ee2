#include <algorithm>
#include <limits>

#include "fabricbench/core/link_analysis.hpp"
#include "fabricbench/core/stats.hpp"

namespace fb {

LinkFigures LinkFigures::reversed() const {
  LinkFigures r = *this;
  std::swap(r.unidir_ab_gbps, r.unidir_ba_gbps);
  return r;
}

LinkMatrix::LinkMatrix(int nodes) : n_(nodes), cells_(static_cast<std::size_t>(nodes * (nodes > 0 ? nodes - 1 : 0) / 2)) {}

std::size_t LinkMatrix::index(int a, int b) const {
  // Row-major upper triangle without the diagonal.
  return static_cast<std::size_t>(a * (2 * n_ - a - 1) / 2 + (b - a - 1));
}

void LinkMatrix::set(int a, int b, const LinkFigures& f) {
  if (a == b || a < 0 || b < 0 || a >= n_ || b >= n_) return;
  cells_[index(std::min(a, b), std::max(a, b))] = a < b ? f : f.reversed();
}

std::optional<LinkFigures> LinkMatrix::get(int a, int b) const {
  if (a == b || a < 0 || b < 0 || a >= n_ || b >= n_) return std::nullopt;
  const auto& cell = cells_[index(std::min(a, b), std::max(a, b))];
  if (!cell || a < b) return cell;
  return cell->reversed();
}

namespace {

struct NodeFigures {
  std::vector<double> unidir, bidir, latency;
};

std::vector<NodeFigures> per_node(const LinkMatrix& m) {
  std::vector<NodeFigures> nodes(static_cast<std::size_t>(m.nodes()));
  for (int a = 0; a < m.nodes(); ++a)
    for (int b = 0; b < m.nodes(); ++b) {
      const auto f = m.get(a, b);
      if (!f) continue;
      auto& n = nodes[static_cast<std::size_t>(a)];
      n.unidir.insert(n.unidir.end(), {f->unidir_ab_gbps, f->unidir_ba_gbps});
      n.bidir.push_back(f->bidir_gbps);
      n.latency.push_back(f->latency_us);
    }
  return nodes;
}

std::size_t links_measured(const LinkMatrix& m) {
  std::size_t n = 0;
  for (int a = 0; a < m.nodes(); ++a)
    for (int b = a + 1; b < m.nodes(); ++b) n += m.get(a, b).has_value();
  return n;
}

// The median over nodes of each node's (upper) median of one figure.
double reference(const std::vector<NodeFigures>& nodes, std::vector<double> NodeFigures::*figure) {
  std::vector<double> medians;
  for (const auto& n : nodes)
    if (!(n.*figure).empty()) medians.push_back(upper_median(n.*figure));
  return median_of(medians);
}

void summarise_nodes(Analysis& a, const std::vector<NodeFigures>& figures) {
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const auto& f = figures[i];
    NodeSummary s;
    s.node = static_cast<int>(i);
    s.links = static_cast<int>(f.bidir.size());
    s.unidir_median_gbps = upper_median(f.unidir);
    s.unidir_min_gbps = f.unidir.empty() ? 0 : *std::min_element(f.unidir.begin(), f.unidir.end());
    s.bidir_median_gbps = upper_median(f.bidir);
    s.latency_median_us = median_of(f.latency);
    a.nodes.push_back(s);
  }
  for (const auto& l : a.links)
    if (l.low)
      for (int end : {l.pair.a, l.pair.b}) ++a.nodes[static_cast<std::size_t>(end)].low_links;
}

// Peel bad nodes off one at a time, the worst first, each time counting only
// links to nodes not yet blamed: a good node's link to a bad node is low
// because of that node and must not make the good node look bad as well.
void find_suspect_nodes(Analysis& a) {
  while (true) {
    int worst = -1;
    double worst_fraction = 0.5;  // a suspect needs more than half of its links low
    for (const auto& s : a.nodes) {
      if (s.suspect) continue;
      int links = 0;
      int low = 0;
      for (const auto& l : a.links) {
        if (l.pair.a != s.node && l.pair.b != s.node) continue;
        if (a.nodes[static_cast<std::size_t>(l.pair.a == s.node ? l.pair.b : l.pair.a)].suspect) continue;
        ++links;
        low += l.low;
      }
      const double fraction = links >= 2 ? static_cast<double>(low) / links : 0.0;
      if (fraction > worst_fraction ||
          (worst >= 0 && fraction == worst_fraction &&
           s.unidir_median_gbps < a.nodes[static_cast<std::size_t>(worst)].unidir_median_gbps)) {
        worst = s.node;
        worst_fraction = fraction;
      }
    }
    if (worst < 0) break;
    a.nodes[static_cast<std::size_t>(worst)].suspect = true;
  }
  for (const auto& s : a.nodes)
    if (s.suspect) a.suspect_nodes.push_back(s.node);
}

bool is_suspect(const Analysis& a, int node) { return a.nodes[static_cast<std::size_t>(node)].suspect; }

void find_suspect_links_and_reference(Analysis& a) {
  std::vector<bool> clean(a.nodes.size(), true);  // no low link to a non-suspect
  for (const auto& l : a.links) {
    if (!l.low || is_suspect(a, l.pair.a) || is_suspect(a, l.pair.b)) continue;
    a.suspect_links.push_back(l.pair);
    clean[static_cast<std::size_t>(l.pair.a)] = clean[static_cast<std::size_t>(l.pair.b)] = false;
  }
  if (!a.third_node_exists()) return;
  double best = -1;
  for (const auto& s : a.nodes) {
    if (s.suspect || !clean[static_cast<std::size_t>(s.node)] || s.links == 0) continue;
    if (s.unidir_median_gbps > best) {
      best = s.unidir_median_gbps;
      a.reference_node = s.node;
    }
  }
}

}  // namespace

LinkVerdict Analysis::judge(NodePair pair, const LinkFigures& f) const {
  LinkVerdict v;
  v.pair = pair;
  v.ratio = std::numeric_limits<double>::infinity();
  auto consider = [&](double value, double ref, const char* what) {
    if (ref <= 0) return;
    if (value / ref < v.ratio) {
      v.ratio = value / ref;
      v.worst = what;
    }
  };
  consider(f.unidir_ab_gbps, refs.unidir_gbps, "unidir a->b");
  consider(f.unidir_ba_gbps, refs.unidir_gbps, "unidir b->a");
  consider(f.bidir_gbps, refs.bidir_gbps, "bidir");
  if (v.worst.empty()) v.ratio = 1;  // no reference: nothing to judge against
  v.low = v.ratio < options.threshold;
  return v;
}

Analysis analyse(const LinkMatrix& m, const AnalysisOptions& options) {
  Analysis a;
  a.options = options;
  const auto figures = per_node(m);
  a.refs.latency_us = reference(figures, &NodeFigures::latency);
  if (options.expect_gbps > 0) {
    a.refs.unidir_gbps = options.expect_gbps;
    a.refs.bidir_gbps = 2 * options.expect_gbps;
    a.refs.expected = true;
  } else if (links_measured(m) > 1) {
    a.refs.unidir_gbps = reference(figures, &NodeFigures::unidir);
    a.refs.bidir_gbps = reference(figures, &NodeFigures::bidir);
  } else {
    // A lone link's reference would be its own faster direction, and its
    // other direction, 10-20% slower on a healthy shared-memory pair, was
    // then "low": a finding and exit 1 from noise on every other launch.
    a.refs.lone_link = true;
  }
  for (int x = 0; x < m.nodes(); ++x)
    for (int y = x + 1; y < m.nodes(); ++y)
      if (const auto f = m.get(x, y)) a.links.push_back(a.judge({x, y}, *f));
  summarise_nodes(a, figures);
  find_suspect_nodes(a);
  find_suspect_links_and_reference(a);
  return a;
}

std::vector<NodePair> retest_pairs(const Analysis& a) {
  std::vector<NodePair> out;
  const int r = a.reference_node;
  if (r < 0) return out;
  auto add = [&](NodePair p) {
    if (p.a != p.b && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (int s : a.suspect_nodes) add({s, r});
  for (const NodePair& l : a.suspect_links) {
    add({l.a, r});
    add({l.b, r});
    add(l);
  }
  return out;
}

}  // namespace fb
