// From a matrix of measured links to findings: which links are low, which
// nodes are bad, and - after retesting the suspects against a node whose
// links are all good - whether a node or a single link is at fault.
// Pure functions, so the rules are tested on synthetic matrices.
//
// The rule (also in docs/pairs.md and docs/results-schema.md, `finding`):
//  - Each bandwidth figure has a reference: the median over nodes of each
//    node's median of that figure over its links (the upper median when a
//    node has an even count). A minority of bad nodes moves no good node's
//    median, so the reference stays the healthy rate. `expect_gbps` replaces
//    it with a rate the user knows (the quote): unidir = expect, bidir = 2x.
//  - A link's ratio is its worst bandwidth figure (unidir each way, bidir)
//    over that figure's reference; the link is low when ratio < threshold.
//  - A node is a suspect when more than half of its links (at least two) are
//    low, counting only links to nodes not already suspect: suspects are
//    peeled off worst first, so a good node's low link to a bad node does not
//    count against it. A low link with no suspect end is a suspect link.
//  - The reference node: not a suspect, no low link to a non-suspect, the
//    highest median unidir. Suspects are retested against it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricbench/core/pair_schedule.hpp"

namespace fb {

// One link's figures: both are taken with the same two ranks.
struct LinkFigures {
  double unidir_ab_gbps = 0;  // a sends, b receives
  double unidir_ba_gbps = 0;
  double bidir_gbps = 0;      // both directions at once, bytes of both counted
  double latency_us = 0;      // half a round trip at the small size (median)
  LinkFigures reversed() const;
};

// One rail's links between nodes 0..nodes-1 (positions in the selection).
class LinkMatrix {
 public:
  explicit LinkMatrix(int nodes = 0);
  int nodes() const { return n_; }
  // Stores the figures of a <-> b as measured with a as the first rank.
  void set(int a, int b, const LinkFigures& f);
  // Oriented so that unidir_ab is `a` sending to `b`; empty when not measured.
  std::optional<LinkFigures> get(int a, int b) const;

 private:
  std::size_t index(int a, int b) const;  // a < b
  int n_ = 0;
  std::vector<std::optional<LinkFigures>> cells_;
};

struct AnalysisOptions {
  double threshold = 0.9;  // low below threshold x reference; 0 flags nothing
  double expect_gbps = 0;  // > 0: the unidir reference (bidir: twice it)
};

struct References {
  double unidir_gbps = 0;
  double bidir_gbps = 0;
  double latency_us = 0;  // for the summaries; latency is not a finding
  bool expected = false;  // from --expect-gbps rather than the measurements
  // One link measured (two nodes, one rail) and no --expect-gbps: nothing to
  // hold it against, so the bandwidth references are 0 and no link is low.
  bool lone_link = false;
};

struct LinkVerdict {
  NodePair pair;
  double ratio = 1;   // worst bandwidth figure over its reference
  std::string worst;  // which figure: "unidir a->b", "unidir b->a", "bidir"
  bool low = false;
};

struct NodeSummary {
  int node = 0;
  int links = 0;
  int low_links = 0;
  double unidir_median_gbps = 0;  // over what it sends and receives (upper median)
  double unidir_min_gbps = 0;
  double bidir_median_gbps = 0;
  double latency_median_us = 0;
  bool suspect = false;
};

struct Analysis {
  AnalysisOptions options;
  References refs;
  std::vector<LinkVerdict> links;  // every measured link, a < b
  std::vector<NodeSummary> nodes;
  std::vector<int> suspect_nodes;
  std::vector<NodePair> suspect_links;
  int reference_node = -1;  // -1: none qualifies, nothing can be retested
  // The worst figure of `f` against the references.
  LinkVerdict judge(NodePair pair, const LinkFigures& f) const;
  // A retest holds a link's ends against a third node: with fewer than three
  // nodes there is none, no reference node, and a low link blames the pair.
  bool third_node_exists() const { return nodes.size() >= 3; }
};

Analysis analyse(const LinkMatrix& matrix, const AnalysisOptions& options);

// What to measure again: each suspect node against the reference node; for
// each suspect link, both its ends against the reference node and the link
// itself. Empty without a reference node.
std::vector<NodePair> retest_pairs(const Analysis& analysis);

struct Finding {
  enum class Kind { node, link };
  Kind kind = Kind::node;
  int node = -1;              // Kind::node
  NodePair link{-1, -1};      // Kind::link; for a node found through one of its links, that link
  double ratio = 0;           // from the matrix: the node's worst link, or the link's
  std::string worst;          // which figure of that link was worst
  int low_links = 0;          // Kind::node: low links of the node, of `links`
  int links = 0;
  int retested_against = -1;  // -1: not retested (no reference node)
  double retest_ratio = -1;
  bool confirmed = false;     // the retest was low too
  // Retested and normal the second time: kept as a warning, does not fail the run.
  bool intermittent() const { return retested_against >= 0 && !confirmed; }
};

// `retests` holds the figures of retest_pairs() as measured.
std::vector<Finding> localise(const Analysis& analysis, const LinkMatrix& retests);

}  // namespace fb
