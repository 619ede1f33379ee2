// Scopes: which ranks take part in a measurement.
//   global  all ranks
//   intra   the ranks of each node, every node at once (NVLink, PCIe, shared memory)
//   inter   one rank per node (local rank 0): the network alone
//   rail    the same local rank across nodes, every rail at once: the NICs
//           each GPU would use in a rail-optimised collective
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/comm.hpp"

namespace fb {

enum class Scope { global, intra, inter, rail };

std::string_view name(Scope scope);
std::optional<Scope> parse_scope(std::string_view text);
std::string allowed_scopes();  // "global, intra, inter, rail, all"
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
};

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
  int groups = 1;      // communicators running at once (nodes for intra, rails for rail)
  int group_size = 0;  // ranks in each of them
  std::string skip;
  bool member() const { return comm.valid(); }
};

ScopeGroup make_scope(const Comm& world, const NodeMap& nodes, Scope scope);

}  // namespace fb
