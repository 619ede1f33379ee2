// The order in which `fabricbench pairs` measures every pair of nodes: in
// rounds of disjoint pairs that run at once, so N nodes take N-1 rounds
// (N even) or N rounds (N odd, one node sitting each round out) instead of
// N(N-1)/2 tests one after another.
#pragma once

#include <vector>

namespace fb {

struct NodePair {
  int a = 0;  // a < b in schedules; retests keep the order they were asked in
  int b = 0;
  friend bool operator==(const NodePair&, const NodePair&) = default;
};

struct PairRound {
  std::vector<NodePair> pairs;
  int bye = -1;  // the node that sits this round out (odd N), else -1
};

// The round-robin "circle" schedule of nodes 0..nodes-1: one node stays put
// (a phantom one for odd N, whose partner has the bye) and the others rotate
// one place per round, so every pair meets exactly once. Empty for nodes < 2.
std::vector<PairRound> round_robin(int nodes);

// A pair on one rail (the same local rank on both nodes; rail 0 without --rails).
struct PairJob {
  int rail = 0;
  NodePair pair;
  friend bool operator==(const PairJob&, const PairJob&) = default;
};

// Every rail runs the same round at once: each round of `round_robin` once per rail.
std::vector<std::vector<PairJob>> rounds_on_rails(int nodes, int rails);

// Rounds for an arbitrary list of jobs (retests, which often share a node):
// greedily, in order, no node twice on a rail within a round.
std::vector<std::vector<PairJob>> pack_rounds(const std::vector<PairJob>& jobs);

}  // namespace fb
