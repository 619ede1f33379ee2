#include "fabricbench/core/scope.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>

#include "fabricbench/core/enum_cover.hpp"

namespace fb {
namespace {

// In enumerator order: `all` runs them in this order, and the watchdog's
// wire carries a scope as its index here.
constexpr std::array kScopes{std::pair{Scope::global, "global"}, std::pair{Scope::intra, "intra"},
                             std::pair{Scope::inter, "inter"}, std::pair{Scope::rail, "rail"},
                             std::pair{Scope::domain, "domain"}};
static_assert(enum_cover::covers<Scope, kScopes>([](const auto& e) { return e.first; }),
              "kScopes names every Scope, in enumerator order");
constexpr auto kAllScopes = [] {
  std::array<Scope, kScopes.size()> all{};
  for (std::size_t i = 0; i < kScopes.size(); ++i) all[i] = kScopes[i].first;
  return all;
}();

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

std::string scope_names() {
  std::string out;
  for (const auto& [s, n] : kScopes) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}
std::string allowed_scopes() { return scope_names() + ", all"; }
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

std::vector<SpanningDomain> spanning_domains(const NodeMap& nodes, std::string* why_none) {
  const auto say = [&](std::string why) {
    if (why_none) *why_none = std::move(why);
    return std::vector<SpanningDomain>{};
  };
  if (nodes.rank_domain.empty())
    return say("no rank's NVLink domain was read (the GPU's fabric info, topo's `fabric`)");
  std::vector<SpanningDomain> all;  // every domain, in order of its first rank
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<int>> node_seen;
  for (std::size_t r = 0; r < nodes.rank_domain.size() && r < nodes.rank_node.size(); ++r) {
    const std::string& key = nodes.rank_domain[r];
    if (key.empty()) continue;
    const auto [it, added] = index.emplace(key, all.size());
    if (added) {
      all.push_back({key, {}, 0});
      node_seen.emplace_back();
    }
    auto& d = all[it->second];
    d.ranks.push_back(static_cast<int>(r));
    auto& seen = node_seen[it->second];
    if (std::find(seen.begin(), seen.end(), nodes.rank_node[r]) == seen.end()) seen.push_back(nodes.rank_node[r]);
    d.nodes = static_cast<int>(seen.size());
  }
  if (all.empty())
    return say(
        "no rank's GPU is in a multi-node NVLink domain (no GPU, or NVML gives no completed fabric info: "
        "not an NVL72-class system)");
  std::vector<SpanningDomain> spanning;
  for (auto& d : all)
    if (d.nodes > 1) spanning.push_back(std::move(d));
  if (spanning.empty())
    return say(
        fmt::format("every NVLink domain of the job is within one node ({} domain{}): the domain scope "
                    "would equal intra",
                    all.size(), all.size() == 1 ? "" : "s"));
  return spanning;
}

namespace {

// The inter scope's members: one rank per network endpoint. Each node is one,
// except that with DomainTraffic::nvlink the nodes of an NVLink domain
// spanning hosts are one together (their traffic meets on NVLink), led by
// the domain's first node. `leads[n]`: node n's local rank 0 takes part.
struct InterEnds {
  std::vector<bool> leads;
  int count = 0;
  std::string skip;
};

InterEnds inter_ends(const NodeMap& nodes, DomainTraffic traffic) {
  InterEnds e;
  e.leads.assign(static_cast<std::size_t>(nodes.nodes), true);
  e.count = nodes.nodes;
  if (nodes.nodes < 2) {
    e.skip = "one node: the inter-node scope needs at least two";
    return e;
  }
  if (traffic == DomainTraffic::network) return e;
  std::set<std::string> spanning;
  for (const SpanningDomain& d : spanning_domains(nodes)) spanning.insert(d.key);
  std::set<std::string> led;  // domains whose first node already leads them
  std::string shared;         // a domain whose nodes became one endpoint
  std::vector<bool> seen(e.leads.size(), false);
  for (std::size_t r = 0; r < nodes.rank_node.size() && r < nodes.rank_domain.size(); ++r) {
    const auto node = static_cast<std::size_t>(nodes.rank_node[r]);
    // A node's local rank 0 is its lowest world rank, the first seen here: its GPU's domain is the node's.
    if (seen.at(node)) continue;
    seen[node] = true;
    const std::string& domain = nodes.rank_domain[r];
    if (!spanning.count(domain) || led.insert(domain).second) continue;
    e.leads[node] = false;  // its domain's first node takes part for it
    --e.count;
    shared = domain;
  }
  if (e.count < 2)
    e.skip = fmt::format(
        "every node of the job is in NVLink domain {}, whose GPUs this backend joins over NVLink: no network "
        "between domains to measure (the domain scope measures NVLink across the hosts)",
        shared);
  return e;
}

}  // namespace

ScopeGroup make_scope(const Comm& world, const NodeMap& nodes, Scope scope, DomainTraffic traffic) {
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
    case Scope::inter: {
      const InterEnds ends = inter_ends(nodes, traffic);
      g.skip = ends.skip;
      const bool leads = ends.leads.at(static_cast<std::size_t>(nodes.node));
      g.comm = world.split(g.skip.empty() && nodes.local_rank == 0 && leads ? 0 : -1, nodes.node);
      g.group_size = ends.count;
      break;
    }
    case Scope::rail:
      if (nodes.nodes < 2) g.skip = "one node: rails need at least two";
      else if (!nodes.uniform) g.skip = "nodes have different rank counts; rails would differ in size";
      else if (nodes.local_size < 2) g.skip = "one rank per node: the rail scope equals inter";
      g.comm = world.split(g.skip.empty() ? nodes.local_rank : -1, nodes.node);
      g.groups = nodes.local_size;
      g.group_size = nodes.nodes;
      break;
    case Scope::domain: {
      // Like intra, grouped by NVLink domain instead of node; ranks whose GPU
      // is in no spanning domain sit it out.
      const auto domains = spanning_domains(nodes, &g.skip);
      int color = -1;
      for (std::size_t d = 0; d < domains.size(); ++d) {
        const auto& ranks = domains[d].ranks;
        if (std::find(ranks.begin(), ranks.end(), world.rank()) != ranks.end()) color = static_cast<int>(d);
        if (ranks.size() != domains.front().ranks.size() && g.skip.empty())
          g.skip = fmt::format(
              "NVLink domains hold different rank counts ({} has {}, {} has {}); domain rows "
              "would mix group sizes",
              domains.front().key, domains.front().ranks.size(), domains[d].key, ranks.size());
      }
      g.comm = world.split(g.skip.empty() ? color : -1, world.rank());
      g.groups = static_cast<int>(domains.size());
      g.group_size = domains.empty() ? 0 : static_cast<int>(domains.front().ranks.size());
      break;
    }
  }
  if (!g.skip.empty()) g.groups = 0;
  return g;
}

}  // namespace fb
