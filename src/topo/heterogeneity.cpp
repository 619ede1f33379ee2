// Heterogeneity: the attributes that differ between ranks (in practice
// between nodes). Mixed GPU generations make fast cards wait for slow ones;
// mixed drivers, NCCL versions, NIC rates, MTUs or firmware make results
// depend on which nodes a job lands on.
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <map>
#include <set>

#include "fabricbench/topo/report.hpp"

namespace fb::topo {
namespace {

// "8 x A + 2 x B", values in sorted order; "none" when empty.
std::string multiset(const std::vector<std::string>& values) {
  if (values.empty()) return "none";
  std::map<std::string, int> count;
  for (const auto& v : values) ++count[v];
  std::string out;
  for (const auto& [v, n] : count) out += fmt::format("{}{} x {}", out.empty() ? "" : " + ", n, v);
  return out;
}

// A value as the heterogeneity lines show it: "unknown" where nothing was read.
std::string shown(const json& v) {
  if (v.is_null()) return "unknown";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string nvlink_of(const json& g) {
  const auto& l = g.value("nvlink", json::object());
  if (l.value("active", 0) == 0) return "no NVLink";
  return fmt::format("NVLink{} x{}", shown(l.value("generation", json())), l.value("active", 0));
}

std::string pcie_of(const json& g) {
  const auto& p = g.value("pcie", json::object());
  return fmt::format("Gen{} x{}", shown(p.value("max_gen", json())), shown(p.value("max_width", json())));
}

std::string memory_of(const json& g) {
  const auto& m = g.value("memory_bytes", json());
  return m.is_number() ? fmt::format("{} MiB", m.get<std::uint64_t>() >> 20) : "unknown";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> fingerprint(const json& inv) {
  std::vector<std::string> models, memory, nvlink, pcie, rates, mtus, firmware;
  for (const auto& g : inv.value("gpus", json::array())) {
    models.push_back(shown(g.value("model", json())));
    memory.push_back(memory_of(g));
    nvlink.push_back(nvlink_of(g));
    pcie.push_back(pcie_of(g));
  }
  for (const auto& n : inv.value("nics", json::array())) {
    if (!n.value("up", false)) continue;
    const std::string kind = n.value("kind", "");
    const auto& rate = n.value("rate_gbit", json());
    rates.push_back(rate.is_number() ? fmt::format("{:g} Gb/s {}", rate.get<double>(), kind) : "unknown " + kind);
    mtus.push_back(fmt::format("{} {}", kind, shown(n.value("mtu_bytes", json()))));
    if (kind != "Ethernet") firmware.push_back(shown(n.value("firmware", json())));
  }
  const auto& sw = inv.value("software", json::object());
  return {
      {"gpus", multiset(models)},
      {"gpu_memory", multiset(memory)},
      {"nvlink", multiset(nvlink)},
      {"gpu_pcie", multiset(pcie)},
      {"driver", shown(sw.value("driver", json()))},
      {"cuda_driver", shown(sw.value("cuda_driver", json()))},
      {"cuda_runtime", shown(sw.value("cuda_runtime", json()))},
      {"nccl", shown(sw.value("nccl", json()))},
      {"nic_rates", multiset(rates)},
      {"mtus", multiset(mtus)},
      {"firmware", multiset(firmware)},
  };
}

std::vector<Difference> find_differences(const std::vector<json>& inventories) {
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, Difference::Holders>> seen;  // attribute -> value -> holders
  for (const auto& inv : inventories) {
    if (inv.contains("error")) continue;  // nothing known to compare
    for (const auto& [attribute, value] : fingerprint(inv)) {
      if (!seen.count(attribute)) order.push_back(attribute);
      auto& h = seen[attribute][value];
      h.value = value;
      const std::string host = inv.value("host", "?");
      if (std::find(h.hosts.begin(), h.hosts.end(), host) == h.hosts.end()) h.hosts.push_back(host);
      h.ranks.push_back(inv.value("rank", -1));
    }
  }
  std::vector<Difference> out;
  for (const auto& attribute : order) {
    const auto& values = seen[attribute];
    if (values.size() < 2) continue;
    Difference d{attribute, {}};
    for (const auto& [v, h] : values) d.values.push_back(h);
    out.push_back(std::move(d));
  }
  return out;
}

json to_json(const std::vector<Difference>& differences) {
  json out = json::array();
  for (const auto& d : differences) {
    json values = json::array();
    for (const auto& h : d.values) values.push_back({{"value", h.value}, {"hosts", h.hosts}, {"ranks", h.ranks}});
    out.push_back({{"attribute", d.attribute}, {"values", values}});
  }
  return out;
}

}  // namespace fb::topo
