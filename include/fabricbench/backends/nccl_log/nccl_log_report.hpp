// `fabricbench report nccl-log`: what an NCCL INFO log says about each
// communicator, and a verdict per node pair a user can act on ("is
// GPUDirect RDMA working?"). Built on nccl_log_model.hpp; pure, so the
// verdicts are tested on recorded logs.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fabricbench/backends/nccl_log/nccl_log_model.hpp"

namespace fb::nccl_log {

// The transports between two nodes (a == b inside one node) of one communicator.
struct NodePair {
  std::string a;  // host names; "node of rank N" when no line of that rank's process is in the log
  std::string b;
  std::set<std::string> tokens;
  std::size_t channels = 0;  // channel directions (one per line NCCL printed)
  std::string verdict;
  // Hosts of an MNNVL communicator that reach each other over the network
  // (NET/IB, NET/Socket): multi-node NVLink fell back for this pair.
  bool nvlink_fallback = false;
  // Hosts of an MNNVL communicator in different NVLink cliques (different racks), so the
  // network between them is the design, not a fallback. Only when NCCL logged both cliques.
  bool across_nvlink_domains = false;
};

std::vector<NodePair> node_pairs(const Communicator& comm);

// Hosts whose every connection to each other is multi-node NVLink
// (P2P/MNNVL, a GB200 NVL72 rack): one NVLink domain, not nodes joined by a network.
struct NvlinkDomain {
  std::vector<std::string> hosts;
  int gpus = 0;  // the communicator's ranks, one GPU each
  std::string clique_id;     // "0x7ffe" when NCCL logged the clique, "" otherwise
  std::string cluster_uuid;  // "" when not logged
};

// The domain when the communicator is MNNVL and no pair of its hosts uses another transport.
std::optional<NvlinkDomain> nvlink_domain(const Communicator& comm);

// Every NVLink domain of an MNNVL communicator: one per clique NCCL logged (two NVL72 racks
// joined by InfiniBand: two), or nvlink_domain's one when no clique was logged; empty when
// the communicator is not MNNVL.
std::vector<NvlinkDomain> nvlink_domains(const Communicator& comm);

// Whether any rank's NVLink clique is in the log. Without it, hosts of an MNNVL communicator
// on the network may be one domain that fell back or two domains joined on purpose.
bool nvlink_cliques_logged(const Communicator& comm);

// A rank whose GPU's NVLink fabric NCCL logged as not ready or not healthy: it may have
// fallen back from MNNVL (NCCL turns MNNVL off unless every rank's fabric state is
// completed, src/mnnvl.cc) or run at reduced NVLink bandwidth.
struct UnhealthyFabricRank {
  int rank = -1;
  FabricHealth health;
  std::vector<std::string> problems;  // "fabric state 2 (in progress), not completed", "healthMask 0x1: ..."
};
// Ranks whose logged fabric state is not completed, whose health mask holds a fault, or
// whose degradedBw is "true". Empty for a healthy log, and for one without these fields.
std::vector<UnhealthyFabricRank> nvlink_fabric_unhealthy_ranks(const Communicator& comm);
// Whether any rank logged its fabric state or health, so an empty list above means healthy.
bool nvlink_fabric_health_logged(const Communicator& comm);
// The faults an NVML fabric health mask holds, in NVML's words; none for a healthy mask
// (which is not zero: "false" is 2 in each field) or one whose fields are not supported.
std::vector<std::string> health_mask_faults(std::uint32_t mask);

// The one-line verdict for the transports of one node pair.
std::string verdict(bool inter_node, const std::vector<Transport>& used);

// "0-3,8,10-11"
std::string channel_ranges(const std::set<int>& channels);

// Why a log that has NCCL lines says nothing about transports ("" when it does).
[[nodiscard]] std::string missing_lines_hint(const Log& log);

std::string format_text(const Log& log, const std::vector<std::string>& files);
nlohmann::ordered_json format_json(const Log& log, const std::vector<std::string>& files);
// The same as printed: indented, newline-ended.
std::string format_json_text(const Log& log, const std::vector<std::string>& files);

}  // namespace fb::nccl_log
