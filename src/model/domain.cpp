// NVLink domains across hosts: how a cluster's hosts fall into them and the
// fabric a collective among their GPUs sees.
#include "fabricbench/model/domain.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fb::model {
namespace {

// A group of `size` GPUs sits inside a domain of `gpus` or fills whole ones.
bool aligned(int size, int gpus) { return size % gpus == 0 || gpus % size == 0; }

}  // namespace

DomainLayout domain_layout(const Link& intra, int host_gpus, int nodes, int tp, int stage) {
  DomainLayout d;
  d.host_gpus = std::max(1, host_gpus);
  d.domains = std::max(1, nodes);
  d.domain_gpus_max = intra.domain_gpus;
  const int most = intra.domain_gpus / d.host_gpus;
  // The largest whole number of hosts per domain: a scheduler places a job
  // of 24 trays as 2 racks of 12 rather than 18 and 6 when it can.
  for (int h = std::min(most, nodes); h > 1; --h) {
    if (nodes % h != 0 || !aligned(tp, h * d.host_gpus) || !aligned(stage, h * d.host_gpus)) continue;
    d.hosts_per_domain = h;
    d.domains = nodes / h;
    break;
  }
  return d;
}

Fabric domain_fabric(const Fabric& fabric, const DomainLayout& d) {
  if (!d.spans_hosts()) return fabric;
  Fabric out = fabric;
  Link& net = out.inter;
  const int h = d.hosts_per_domain;
  net.label = fmt::format("{} hosts x {}", h, fabric.inter.label);
  net.bw_gbps *= h;
  net.line_gbps *= h;
  net.nics *= h;
  net.curves.clear();  // measured per host: a domain's shapes were never run
  return out;
}

std::string describe(const DomainLayout& d, const Fabric& f) {
  if (d.domain_gpus_max <= d.host_gpus) return "";
  const std::string fits =
      d.spans_hosts()
          ? fmt::format(
                "here {} domain{} of {} hosts ({} GPUs): collectives among a domain's GPUs on NVLink at {:.4g} "
                "GB/s busbw per GPU{}, {}",
                d.domains, d.domains == 1 ? "" : "s", d.hosts_per_domain, d.gpus(), f.intra.bw_gbps,
                f.intra.nvls_gbps > 0 ? fmt::format(" (NVLS {:.4g})", f.intra.nvls_gbps) : "",
                d.domains == 1 ? "nothing leaves the domain on the network"
                               : fmt::format("only traffic between domains on the network ({} hosts' NICs "
                                             "per domain)",
                                             d.hosts_per_domain))
          : "here each host is a domain of its own (one host, or hosts that cannot be split evenly): all traffic "
            "between hosts on the network";
  return fmt::format("NVLink domain: {} joins up to {} GPUs ({} hosts of {}); {}", f.intra.label, d.domain_gpus_max,
                     d.domain_gpus_max / d.host_gpus, d.host_gpus, fits);
}

}  // namespace fb::model
