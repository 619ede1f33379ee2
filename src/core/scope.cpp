#include "fabricbench/core/scope.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>

namespace fb {
namespace {

constexpr std::array kScopes{std::pair{Scope::global, "global"}, std::pair{Scope::intra, "intra"},
                             std::pair{Scope::inter, "inter"}, std::pair{Scope::rail, "rail"}};
constexpr std::array kAllScopes{Scope::global, Scope::intra, Scope::inter, Scope::rail};

}  // namespace

std::string_view name(Scope scope) {
  for (const auto& [s, n] : kScopes)
    if (s == scope) return n;
  return "?";
}

std::optional<Scope> parse_scope(std::string_view text) {
  for (const auto& [s, n] : kScopes)
    if (text == n) return s;
  return std::nullopt;
}

std::string allowed_scopes() { return "global, intra, inter, rail, all"; }
std::span<const Scope> all_scopes() { return kAllScopes; }

namespace {

// FABRICBENCH_RANKS_PER_NODE=k groups each k consecutive ranks as a node:
// for tests of the scope logic on one machine (emulated nodes in network
// namespaces are the real thing; see scripts/emulate-cluster.sh). 0 when unset.
int forced_ranks_per_node() {
  const char* forced = std::getenv("FABRICBENCH_RANKS_PER_NODE");
  return forced ? std::max(0, std::atoi(forced)) : 0;
}

}  // namespace

Comm split_nodes(const Comm& world) {
  const int per_node = forced_ranks_per_node();
  return per_node > 0 ? world.split(world.rank() / per_node, world.rank()) : world.split_node();
}

std::string node_name(int world_rank) {
  const int per_node = forced_ranks_per_node();
  return per_node > 0 ? host_name() + "/" + std::to_string(world_rank / per_node) : host_name();
}

NodeMap map_nodes(const Comm& world) {
  // Nodes are what MPI calls shared-memory domains; each is named by the
  // host name of its lowest rank (emulated nodes set their own host names).
  NodeMap m;
  Comm node = split_nodes(world);
  m.local_rank = node.rank();
  m.local_size = node.size();
  std::int64_t leader = world.rank();  // world rank of this node's local rank 0
  node.bcast_quiet({&leader, 1}, 0);

  const auto n = static_cast<std::size_t>(world.size());
  const std::vector<std::int64_t> leader_of = world.allgather_quiet(leader);
  const std::vector<std::string> hosts = world.allgather_strings(node_name(world.rank()));

  std::map<std::int64_t, int> node_index;  // leader world rank -> node index, in rank order
  std::map<std::int64_t, int> node_size;
  for (std::size_t r = 0; r < n; ++r) {
    if (node_index.emplace(leader_of[r], static_cast<int>(node_index.size())).second)
      m.node_hosts.push_back(hosts[r]);
    ++node_size[leader_of[r]];
  }
  m.nodes = static_cast<int>(m.node_hosts.size());
  for (std::size_t r = 0; r < n; ++r) m.rank_node.push_back(node_index[leader_of[r]]);
  m.node = m.rank_node[static_cast<std::size_t>(world.rank())];
  for (const auto& [lead, size] : node_size) m.uniform = m.uniform && size == m.local_size;
  return m;
}

ScopeGroup make_scope(const Comm& world, const NodeMap& nodes, Scope scope) {
  // Every rank calls this with the same arguments: the splits are collective.
  ScopeGroup g;
  g.scope = scope;
  switch (scope) {
    case Scope::global:
      g.comm = world.dup();
      g.group_size = world.size();
      break;
    case Scope::intra:
      if (!nodes.uniform) g.skip = "nodes have different rank counts; intra rows would mix group sizes";
      if (nodes.local_size < 2 && nodes.uniform) g.skip = "one rank per node: nothing to measure inside a node";
      g.comm = world.split(g.skip.empty() ? nodes.node : -1, nodes.local_rank);
      g.groups = nodes.nodes;
      g.group_size = nodes.local_size;
      break;
    case Scope::inter:
      if (nodes.nodes < 2) g.skip = "one node: the inter-node scope needs at least two";
      g.comm = world.split(g.skip.empty() && nodes.local_rank == 0 ? 0 : -1, nodes.node);
      g.group_size = nodes.nodes;
      break;
    case Scope::rail:
      if (nodes.nodes < 2) g.skip = "one node: rails need at least two";
      else if (!nodes.uniform) g.skip = "nodes have different rank counts; rails would differ in size";
      else if (nodes.local_size < 2) g.skip = "one rank per node: the rail scope equals inter";
      g.comm = world.split(g.skip.empty() ? nodes.local_rank : -1, nodes.node);
      g.groups = nodes.local_size;
      g.group_size = nodes.nodes;
      break;
  }
  if (!g.skip.empty()) g.groups = 0;
  return g;
}

}  // namespace fb
