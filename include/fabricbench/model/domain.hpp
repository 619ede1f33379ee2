// NVLink domains larger than a host (GB200/GB300 NVL72: 72 GPUs over 18
// trays of 4, joined by NVLink switch trays). NCCL treats the GPUs of one
// domain as one node (its MNNVL support: P2P over NVLink between hosts and
// NVLS across the domain), so the model prices a collective among them on
// NVLink and only the traffic between domains on the network, where each
// domain's hosts bring their own NICs.
#pragma once

#include <string>

#include "fabricbench/model/fabric.hpp"

namespace fb::model {

// How a cluster's hosts fall into NVLink domains.
struct DomainLayout {
  int host_gpus = 1;         // GPUs per host
  int hosts_per_domain = 1;  // hosts of the cluster in each domain (1: the domain is the host)
  int domains = 1;           // domains the cluster spans
  int domain_gpus_max = 0;   // the preset's domain (0: none larger than a host)
  int gpus() const { return host_gpus * hosts_per_domain; }
  bool spans_hosts() const { return hosts_per_domain > 1; }
};

// The cluster's `nodes` hosts of `host_gpus` in domains of the node's
// `domain_gpus`: as many hosts per domain as the domain holds and divide
// the hosts evenly, with a TP group and a pipeline stage (`stage` GPUs)
// each inside one domain or filling whole ones, as placement needs.
DomainLayout domain_layout(const Link& intra, int host_gpus, int nodes, int tp, int stage);

// The fabric collectives see: the domain is the "node", its network the
// hosts' NICs together (a measured network's bandwidth scaled the same way,
// its curves set aside: they were measured per host).
Fabric domain_fabric(const Fabric& fabric, const DomainLayout& layout);

// "NVLink domain: nvl72-tray-4 joins up to 72 GPUs (18 hosts of 4); here 4
// hosts in 1 domain of 16 GPUs: ..."; "" when the domain is the host.
std::string describe(const DomainLayout& layout, const Fabric& fabric);

}  // namespace fb::model
