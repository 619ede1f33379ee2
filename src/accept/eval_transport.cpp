// The `transport` rule: no NCCL row crossed the network on TCP sockets
// (path NET/Socket) while a node of the run has an RDMA NIC up (inventory
// `nics`, kind IB, RoCE or EFA):
//   - kind: transport
//     scope: inter          # optional, as op, placement, datatype: every row otherwise
// NCCL falls back to sockets without a word when the RDMA device is not in
// the container, memory cannot be pinned (no IPC_LOCK, a memlock limit) or
// NCCL_IB_DISABLE / NCCL_NET say so; the figures then measure TCP, and an
// acceptance on them judges the wrong network.
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "eval_parts.hpp"
#include "fabricbench/core/inventory_gpus.hpp"

namespace fb::accept {
namespace {

bool on_network(const Measurement& m) { return m.path.find("NET/") != std::string::npos; }
bool on_sockets(const Measurement& m) { return m.path.find("NET/Socket") != std::string::npos; }

}  // namespace

Verdict eval_transport(const Rule& rule, const Results& run) {
  if (run.inventory.empty())
    return skipped(rule, "no inventory lines in this run: which NICs the nodes have is unknown");
  std::vector<const Measurement*> network, sockets;
  for (const auto* m : select_rows(run, rule.rows)) {
    if (on_network(*m)) network.push_back(m);
    if (on_sockets(*m)) sockets.push_back(m);
  }
  if (network.empty())
    return skipped(rule,
                   "no row crossed the network through NCCL (no NET/ path): measure --scope inter or rail with "
                   "--backend nccl on two or more nodes");
  std::map<std::string, std::vector<std::string>> rdma_by_host;  // a node's leader and its ranks see the same NICs
  for (const auto& line : run.inventory)
    for (auto& nic : rdma_nics_up(line))
      if (rdma_by_host[line.host].size() < 4) rdma_by_host[line.host].push_back(std::move(nic));
  Verdict v = start_verdict(rule);
  v.unit = kUnitSocketRows;
  if (rdma_by_host.empty()) {
    judge(v, Bound::max, 0, 0, "0");
    v.reason = fmt::format("no node has an RDMA NIC up: the {} network rows ran on {}, what this cluster has",
                           network.size(), network.front()->path);
    return v;
  }
  judge(v, Bound::max, static_cast<double>(sockets.size()), 0, "0");
  std::string hosts;
  for (const auto& [host, nics] : rdma_by_host) {
    hosts += fmt::format("{}{} ({})", hosts.empty() ? "" : "; ", host, fmt::join(nics, ", "));
    if (!sockets.empty()) v.offenders.push_back({host, -1, "", static_cast<double>(sockets.size()), v.unit});
  }
  if (sockets.empty()) {
    v.reason = fmt::format("the {} network rows ran on RDMA ({}); RDMA NICs up on {}", network.size(),
                           network.front()->path, hosts);
    return v;
  }
  v.row = row_json(*sockets.front());
  v.reason = fmt::format(
      "{} of {} network rows ran on TCP sockets (first: {}, path {}) while RDMA NICs are up on {}: "
      "NCCL fell back to sockets. Give each rank the RDMA device, the IPC_LOCK capability and "
      "unlimited locked memory (ulimit -l), and check NCCL_IB_DISABLE and NCCL_NET "
      "(docs/kubernetes.md); on EFA, the aws-ofi-nccl plugin and FI_PROVIDER=efa",
      sockets.size(), network.size(), row_label(*sockets.front()), sockets.front()->path, hosts);
  return v;
}

}  // namespace fb::accept
