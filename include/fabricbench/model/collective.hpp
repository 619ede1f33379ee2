// The cost of one collective on a group of GPUs, as NCCL's tuner prices it:
// ring, tree (all_reduce) and NVLS (all_reduce inside an NVSwitch node), each
// with NCCL's LL, LL128 and Simple protocols; the fastest is the answer, as
// NCCL's tuner picks it (src/graph/tuning.cc; tables in nccl_tuning.hpp,
// explained in docs/model.md). A measured curve of the same op, rank count
// and group shape comes first.
#pragma once

#include <string>

#include "fabricbench/core/types.hpp"
#include "fabricbench/model/fabric.hpp"

namespace fb::model {

// How a group of ranks sits on the nodes: `per_node` members on each of
// `nodes` nodes; `sharing` groups like it run the same collective at the
// same time on each node (they share its NICs).
struct GroupShape {
  int per_node = 1;
  int nodes = 1;
  int sharing = 1;
  int ranks() const { return per_node * nodes; }
};

struct CollectiveCost {
  double time_us = 0;
  double latency_us = 0;         // the size-independent part
  double busbw_gbps = 0;         // the rate of the bandwidth term, nccl-tests' busbw
  double inter_wire_bytes = 0;   // leaving each node per call, one direction, all sharing groups
  std::string algorithm;         // ring, tree, nvls, p2p, measured
  std::string protocol;          // LL, LL128, Simple ("" for a measured curve)
  std::string where;             // intra, inter, intra+inter
  Basis basis = Basis::preset;
  std::string formula;           // how the time was made, with the numbers
};

// `bytes` follow nccl-tests' size convention (per-rank buffer for
// all_reduce and sendrecv, the whole gathered buffer for all_gather and
// reduce_scatter).
CollectiveCost collective_cost(const Fabric& fabric, Op op, double bytes, const GroupShape& shape);

}  // namespace fb::model
