// The path each scope takes from this rank, and its spec peak per direction:
//   intra  NVLink (generation x active links) or PCIe (the GPU's link), and
//          SHM for host-memory backends
//   inter  the node's IB ports, RoCE ports, EFA devices, and TCP over its
//          Ethernet interfaces (rate x count)
//   rail   the NICs nearest this rank's GPU
//   domain NVLink again, where the GPU is in a multi-node NVLink domain
//          (NVL72): its links reach every GPU of the domain at the same
//          rate, on this node or another
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <map>
#include <optional>

#include "fabricbench/topo/spec.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

// Active ports or interfaces of one class, their summed rate, and the text
// "8 x 400 Gb/s NDR" (several rates: "6 x 400 Gb/s NDR + 2 x 200 Gb/s HDR").
struct NicGroup {
  std::vector<const Nic*> up;
  int down = 0;
};

std::string speed_name(const Nic& n) {
  if (n.kind != "IB" || !n.rate) return "";
  const auto r = parse_ib_rate(*n.rate);
  return r && !r->speed.empty() ? " " + r->speed : "";
}

Path group_path(const std::string& scope, const std::string& cls, const NicGroup& g, const std::string& where) {
  Path p{scope, cls, Fact<double>::unknown(""), ""};
  if (g.up.empty()) {
    p.basis = fmt::format("no {} {} up", cls, cls == "TCP" ? "interface" : "port");
    p.peak_gbps = Fact<double>::unknown(g.down > 0 ? fmt::format("all {} {} ports are down", g.down, cls)
                                                   : fmt::format("no {} link is up", cls));
    return p;
  }
  std::map<std::string, int> by_rate;  // "400 Gb/s NDR" -> count, in text order
  double gbit = 0;
  std::string unknown;
  for (const Nic* n : g.up) {
    if (!n->rate_gbit) {
      unknown += fmt::format("{}{}: {}", unknown.empty() ? "" : "; ", n->name, n->rate_gbit.why());
      ++by_rate["unknown rate (" + n->name + ")"];
      continue;
    }
    gbit += *n->rate_gbit;
    ++by_rate[format_gbit(*n->rate_gbit) + speed_name(*n) + (cls == "TCP" ? " (" + n->name + ")" : "")];
  }
  for (const auto& [rate, count] : by_rate)
    p.basis += fmt::format("{}{} x {}", p.basis.empty() ? "" : " + ", count, rate);
  if (g.down > 0) p.basis += fmt::format("; {} port{} down", g.down, g.down > 1 ? "s" : "");
  if (!where.empty()) p.basis += " " + where;
  p.peak_gbps = unknown.empty() ? Fact<double>(gbit_to_gbps(gbit)) : Fact<double>::unknown(unknown);
  return p;
}

std::vector<Path> network_paths(const std::string& scope, const std::vector<Nic>& nics, const std::string& where) {
  std::map<std::string, NicGroup> groups;  // by class: IB, RoCE, EFA, TCP
  for (const auto& n : nics) {
    const std::string cls = n.kind == "Ethernet" ? "TCP" : n.kind;
    if (cls == "unknown") continue;
    auto& g = groups[cls];
    if (n.up) {
      g.up.push_back(&n);
    } else if (cls != "TCP") {
      ++g.down;  // an unplugged Ethernet port is common; a down RDMA port is not
    }
  }
  groups.try_emplace("TCP");  // always say what TCP would have, even nothing
  std::vector<Path> paths;
  for (const char* cls : {"IB", "RoCE", "EFA", "TCP"})
    if (groups.count(cls)) paths.push_back(group_path(scope, cls, groups[cls], where));
  return paths;
}

Path intra_gpu_path(const Gpu& g) {
  if (g.nvlink.active > 0) return {"intra", "NVLink", g.nvlink.total_gbps(), nvlink_text(g.nvlink)};
  // Without NVLink, GPU peers exchange over PCIe: this GPU's link bounds it.
  return {"intra", "PCIe", g.pcie.peak_gbps(),
          fmt::format("PCIe {} (GPU{})", pcie_text(g.pcie.max_gen, g.pcie.max_width), g.index)};
}

// The domain scope's path: the GPU's own NVLink, where it joined a
// multi-node NVLink domain; none where it is in no such domain.
std::optional<Path> domain_path(const Gpu& g) {
  if (!g.fabric || !g.fabric->joined()) return std::nullopt;
  const std::string where = fmt::format("in NVLink domain {}", g.fabric->domain());
  if (g.nvlink.active == 0)
    return Path{"domain", "NVLink",
                Fact<double>::unknown(fmt::format("GPU{} {} has no active NVLink links", g.index, where)),
                fmt::format("no active NVLink link (GPU{} {})", g.index, where)};
  return Path{"domain", "NVLink", g.nvlink.total_gbps(),
              fmt::format("{} (GPU{} {})", nvlink_text(g.nvlink), g.index, where)};
}

const Rail* rail_of(const Inventory& inv, int gpu) {
  for (const auto& r : inv.rails)
    if (r.gpu == gpu) return &r;
  return nullptr;
}

std::vector<Path> rail_paths(const Inventory& inv) {
  if (inv.rank_gpu) {
    if (const Rail* r = rail_of(inv, *inv.rank_gpu)) {
      std::vector<Nic> rail_nics;
      for (const auto& n : inv.nics)
        if (std::find(r->nics.begin(), r->nics.end(), n.name) != r->nics.end()) rail_nics.push_back(n);
      auto paths =
          network_paths("rail", rail_nics, fmt::format("({}, {} to GPU{})", r->nics.front(), r->distance, r->gpu));
      std::erase_if(paths, [](const Path& p) { return p.cls == "TCP"; });
      return paths;
    }
  }
  // No GPU rail: every local rank shares the node's NICs.
  return network_paths("rail", inv.nics, "(the node's NICs, shared by every local rank)");
}

}  // namespace

std::vector<Path> derive_paths(const Inventory& inv) {
  std::vector<Path> paths;
  if (inv.rank_gpu) paths.push_back(intra_gpu_path(inv.gpus[static_cast<std::size_t>(*inv.rank_gpu)]));
  paths.push_back(
      {"intra", "SHM",
       Fact<double>::unknown("host shared memory has no link rate: copies run at the memory system's speed"),
       "host shared memory"});
  for (auto& p : network_paths("inter", inv.nics, "")) paths.push_back(std::move(p));
  for (auto& p : rail_paths(inv)) paths.push_back(std::move(p));
  if (inv.rank_gpu)
    if (auto p = domain_path(inv.gpus[static_cast<std::size_t>(*inv.rank_gpu)])) paths.push_back(std::move(*p));
  return paths;
}

}  // namespace fb::topo
