// Scopes: which ranks take part in a measurement.
//   global  all ranks
//   intra   the ranks of each node, every node at once (NVLink, PCIe, shared memory)
//   inter   one rank per node (local rank 0): the network alone; for a
//           backend whose traffic crosses an NVLink domain that spans nodes
//           on that NVLink (NCCL), one rank per such domain instead
//   rail    the same local rank across nodes, every rail at once: the NICs
//           each GPU would use in a rail-optimised collective
//   domain  the ranks of each NVLink domain that spans more than one node
//           (GB200 NVL72: 18 trays of 4 GPUs), every such domain at once:
//           NVLink between hosts, apart from the host and the network
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/comm.hpp"

namespace fb {

enum class Scope { global, intra, inter, rail, domain };

std::string_view name(Scope scope);
std::optional<Scope> parse_scope(std::string_view text);
std::string scope_names();     // "global, intra, inter, rail, domain"
std::string allowed_scopes();  // the same and "all"
// "all" expands to every scope that means something on this job's layout.
std::span<const Scope> all_scopes();

// Where this rank sits: its node and its index within the node.
struct NodeMap {
  int node = 0;            // index of this rank's node, 0..nodes-1, in order of first rank
  int local_rank = 0;
  int local_size = 1;
  int nodes = 1;
  bool uniform = true;     // every node has the same number of ranks
  std::vector<std::string> node_hosts;  // host name of each node
  std::vector<int> rank_node;           // node index of every world rank
  // The NVLink domain key of every world rank's GPU (topo's
  // "<cluster uuid>/<clique>"; "" for a rank whose GPU is in none). Empty
  // when nobody read them: the domain scope is then skipped. The engine
  // only compares the keys; the CLI reads them (topo) and hands them in.
  std::vector<std::string> rank_domain;
};

// An NVLink domain of the job that spans more than one node: its key, and
// the world ranks in it, in rank order.
struct SpanningDomain {
  std::string key;
  std::vector<int> ranks;
  int nodes = 0;  // nodes its ranks are on (2 or more)
};
// The job's NVLink domains spanning nodes, in order of their first rank;
// `why_none` says why there is none (no domain known, every one in one node).
std::vector<SpanningDomain> spanning_domains(const NodeMap& nodes, std::string* why_none = nullptr);

NodeMap map_nodes(const Comm& world);
// This rank's node, as map_nodes forms them: MPI's shared-memory domain, or
// with FABRICBENCH_RANKS_PER_NODE=k (tests) its block of k world ranks.
// Collective over `world`.
Comm split_nodes(const Comm& world);
// Its name: the host name, "host/k" for the k-th block of FABRICBENCH_RANKS_PER_NODE.
std::string node_name(int world_rank);

// The communicator this rank uses at a scope. `comm` is null when the rank
// sits this scope out (inter: local ranks other than 0). `skip` explains why a
// scope cannot run on this job's layout (then nobody takes part).
struct ScopeGroup {
  Scope scope = Scope::global;
  Comm comm;
  int groups = 1;      // communicators running at once (nodes for intra, rails for rail, domains for domain)
  int group_size = 0;  // ranks in each of them
  std::string skip;
  bool member() const { return comm.valid(); }
};

// How a backend's traffic between two nodes of one NVLink domain that spans
// hosts travels: over the network like any other (host memory), or over that
// domain's NVLink (NCCL's multi-node NVLink). With `nvlink` the inter scope
// takes one rank per such domain (its first node's local rank 0), so that
// its rows are the network between domains, never NVLink.
enum class DomainTraffic { network, nvlink };

ScopeGroup make_scope(const Comm& world, const NodeMap& nodes, Scope scope,
                      DomainTraffic traffic = DomainTraffic::network);

}  // namespace fb
