// Who reports to whom: each node's ranks to their node leader (the node's
// lowest rank) over a local socket, the leaders to rank 0 over TCP, so that
// rank 0 holds one connection per node (plus its own node's ranks) and not
// one per rank. Pure: built from the node of every rank.
#pragma once

#include <string>
#include <vector>

namespace fb::watch {

class Tree {
 public:
  // `rank_node[r]`: the node of rank r (0 .. nodes-1); rank 0 is on node 0.
  Tree(std::vector<int> rank_node, std::vector<std::string> node_hosts);

  int size() const { return static_cast<int>(rank_node_.size()); }
  int nodes() const { return static_cast<int>(leader_.size()); }
  int node_of(int rank) const { return rank_node_.at(static_cast<std::size_t>(rank)); }
  int leader_of_node(int node) const { return leader_.at(static_cast<std::size_t>(node)); }
  bool is_leader(int rank) const { return leader_of_node(node_of(rank)) == rank; }
  // -1 for rank 0; 0 for the other leaders; the node's leader for the rest.
  int parent(int rank) const;
  // The ranks whose parent is `rank`, in order.
  std::vector<int> children(int rank) const;
  const std::vector<int>& ranks_of_node(int node) const { return members_.at(static_cast<std::size_t>(node)); }
  const std::string& host_of(int rank) const { return hosts_.at(static_cast<std::size_t>(node_of(rank))); }
  // A message about `about` may come from `child` (itself, or the leader of its node).
  bool speaks_for(int child, int about) const;

 private:
  std::vector<int> rank_node_;
  std::vector<std::string> hosts_;
  std::vector<int> leader_;
  std::vector<std::vector<int>> members_;
};

}  // namespace fb::watch
