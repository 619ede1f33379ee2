#include "tree.hpp"

#include <algorithm>
#include <stdexcept>

namespace fb::watch {

Tree::Tree(std::vector<int> rank_node, std::vector<std::string> node_hosts)
    : rank_node_(std::move(rank_node)), hosts_(std::move(node_hosts)) {
  int nodes = 0;
  for (int n : rank_node_) nodes = std::max(nodes, n + 1);
  if (rank_node_.empty() || rank_node_[0] != 0 || static_cast<int>(hosts_.size()) < nodes)
    throw std::invalid_argument("watchdog tree: rank 0 must be on node 0 and every node needs a host");
  leader_.assign(static_cast<std::size_t>(nodes), -1);
  members_.resize(static_cast<std::size_t>(nodes));
  for (int r = 0; r < size(); ++r) {
    const int n = rank_node_[static_cast<std::size_t>(r)];
    if (n < 0) throw std::invalid_argument("watchdog tree: a rank without a node");
    if (leader_[static_cast<std::size_t>(n)] < 0) leader_[static_cast<std::size_t>(n)] = r;
    members_[static_cast<std::size_t>(n)].push_back(r);
  }
  for (int l : leader_)
    if (l < 0) throw std::invalid_argument("watchdog tree: a node without ranks");
}

int Tree::parent(int rank) const {
  if (rank == 0) return -1;
  return is_leader(rank) ? 0 : leader_of_node(node_of(rank));
}

std::vector<int> Tree::children(int rank) const {
  std::vector<int> out;
  if (rank == 0)
    for (int n = 1; n < nodes(); ++n) out.push_back(leader_of_node(n));
  if (is_leader(rank))
    for (int r : ranks_of_node(node_of(rank)))
      if (r != rank) out.push_back(r);
  std::sort(out.begin(), out.end());
  return out;
}

bool Tree::speaks_for(int child, int about) const {
  if (about < 0 || about >= size()) return false;
  if (child == about) return true;
  return is_leader(child) && child != 0 && node_of(child) == node_of(about);
}

}  // namespace fb::watch
