// After the retests: a node or a single link, and whether the retest saw it again.
#include <algorithm>
#include <limits>

#include "fabricbench/core/link_analysis.hpp"

namespace fb {
namespace {

class Localiser {
 public:
  Localiser(const Analysis& a, const LinkMatrix& retests) : a_(a), retests_(retests) {}

  std::vector<Finding> run() {
    for (int s : a_.suspect_nodes) suspect_node(s);
    for (const NodePair& l : a_.suspect_links) suspect_link(l);
    return std::move(out_);
  }

 private:
  std::optional<LinkVerdict> retest(int x, int y) const {
    if (x < 0 || y < 0) return std::nullopt;
    const auto f = retests_.get(x, y);
    if (!f) return std::nullopt;
    return a_.judge({x, y}, *f);
  }

  const LinkVerdict& verdict(NodePair p) const {
    return *std::find_if(a_.links.begin(), a_.links.end(), [&](const LinkVerdict& v) { return v.pair == p; });
  }

  Finding& node_finding(int node) {
    for (auto& f : out_)
      if (f.kind == Finding::Kind::node && f.node == node) return f;
    Finding f;
    f.node = node;
    const auto& s = a_.nodes[static_cast<std::size_t>(node)];
    f.low_links = s.low_links;
    f.links = s.links;
    f.ratio = std::numeric_limits<double>::infinity();
    for (const auto& v : a_.links)
      if ((v.pair.a == node || v.pair.b == node) && v.ratio < f.ratio) {
        f.ratio = v.ratio;
        f.worst = v.worst;
      }
    out_.push_back(f);
    return out_.back();
  }

  void note_retest(Finding& f, const std::optional<LinkVerdict>& v) const {
    if (!v) return;
    f.retested_against = a_.reference_node;
    f.retest_ratio = v->ratio;
    f.confirmed = v->low;
  }

  void suspect_node(int s) { note_retest(node_finding(s), retest(s, a_.reference_node)); }

  // Both ends against the reference node tell a node from the link: an end
  // that is low there too is the fault; if neither is, the link itself is.
  void suspect_link(NodePair l) {
    const auto va = retest(l.a, a_.reference_node);
    const auto vb = retest(l.b, a_.reference_node);
    bool blamed_a_node = false;
    for (const auto& [end, v] : {std::pair{l.a, va}, std::pair{l.b, vb}}) {
      if (!v || !v->low) continue;
      Finding& f = node_finding(end);
      f.link = l;
      note_retest(f, v);
      blamed_a_node = true;
    }
    if (blamed_a_node) return;
    Finding f;
    f.kind = Finding::Kind::link;
    f.link = l;
    const auto& v = verdict(l);
    f.ratio = v.ratio;
    f.worst = v.worst;
    if (va && vb) note_retest(f, retest(l.a, l.b));
    out_.push_back(f);
  }

  const Analysis& a_;
  const LinkMatrix& retests_;
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> localise(const Analysis& analysis, const LinkMatrix& retests) {
  return Localiser(analysis, retests).run();
}

}  // namespace fb
