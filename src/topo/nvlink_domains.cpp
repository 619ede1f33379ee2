// The NVLink domains a job's GPUs fall into, across nodes: each GPU's
// cluster UUID and clique (inventory `fabric`), counted once per host.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "fabricbench/topo/report.hpp"

namespace fb::topo {
namespace {

// A GPU's domain where its registration completed without error, else "".
std::string joined_domain(const json& gpu) {
  const json f = gpu.value("fabric", json());
  if (!f.is_object() || f.value("state", "") != "completed" || !f.contains("domain") || f.contains("status") ||
      !f["domain"].is_string())
    return "";
  return f["domain"].get<std::string>();
}

}  // namespace

std::string rank_nvlink_domain(const json& inventory) {
  const auto at = inventory.find("rank_gpu");
  if (at == inventory.end() || !at->is_number_integer()) return "";
  for (const auto& g : inventory.value("gpus", json::array()))
    if (g.value("index", -1) == at->get<int>()) return joined_domain(g);
  return "";
}

std::vector<NvlinkDomain> nvlink_domains(const std::vector<json>& inventories) {
  std::map<std::string, std::set<std::pair<std::string, int>>> gpus;  // domain -> (host, index)
  for (const auto& inv : inventories) {
    const std::string host = inv.value("host", "");
    for (const auto& g : inv.value("gpus", json::array())) {
      const std::string domain = joined_domain(g);
      if (!domain.empty()) gpus[domain].insert({host, g.value("index", 0)});
    }
  }
  std::vector<NvlinkDomain> out;
  for (const auto& [id, members] : gpus) {
    NvlinkDomain d{id, static_cast<int>(members.size()), {}};
    for (const auto& m : members)
      if (std::find(d.hosts.begin(), d.hosts.end(), m.first) == d.hosts.end()) d.hosts.push_back(m.first);
    out.push_back(std::move(d));
  }
  return out;
}

std::string format_domains(const std::vector<NvlinkDomain>& domains) {
  if (domains.empty()) return "";
  std::string s = fmt::format("\nNVLink domains (multi-node NVLink, cluster UUID/clique): {}\n", domains.size());
  for (const auto& d : domains) {
    std::string hosts;
    for (const auto& h : d.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
    s += fmt::format("  {}: {} GPU{} on {} host{}: {}\n", d.id, d.gpus, d.gpus == 1 ? "" : "s", d.hosts.size(),
                     d.hosts.size() == 1 ? "" : "s", hosts);
  }
  if (domains.size() > 1)
    s += fmt::format("  the job spans {} NVLink domains: traffic between them takes the network\n", domains.size());
  return s;
}

}  // namespace fb::topo
