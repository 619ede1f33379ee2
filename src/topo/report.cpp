// The readable report rank 0 prints: one block per node, then the differences.
#include "fabricbench/topo/report.hpp"

#include <fmt/format.h>

#include <map>

#include "fabricbench/core/text_table.hpp"

namespace fb::topo {
namespace {

std::string text(const json& v, const char* unit = "") {
  if (v.is_null()) return "?";
  if (v.is_number_float()) return fmt::format("{:.4g}{}", v.get<double>(), unit);
  return (v.is_string() ? v.get<std::string>() : v.dump()) + unit;
}

std::string field(const json& obj, const char* key) { return text(obj.value(key, json())); }

// "why" of an unknown value in `obj`, or "".
std::string why(const json& obj, const char* key) {
  const auto& u = obj.value("unknown", json::object());
  return u.contains(key) ? u[key].get<std::string>() : "";
}

// Every unknown fact in the line, grouped by reason: "reason (GPU0.model, ...)".
void collect_unknown(const json& obj, const std::string& where, std::map<std::string, std::vector<std::string>>& out) {
  if (!obj.is_object()) return;
  for (const auto& [key, value] : obj.items()) {
    if (key == "unknown") {
      for (const auto& [k, reason] : value.items()) out[reason.get<std::string>()].push_back(where + k);
    } else if (value.is_object()) {
      collect_unknown(value, where + key + ".", out);
    }
  }
}

void gpu_lines(std::string& s, const json& g) {
  const auto& pcie = g.value("pcie", json::object());
  const auto& nv = g.value("nvlink", json::object());
  const auto& mem = g.value("memory_bytes", json());
  s += fmt::format("    GPU{}  {}  {}  {}  {}\n", field(g, "index"), field(g, "model"),
                   mem.is_number() ? fmt::format("{} MiB", mem.get<std::uint64_t>() >> 20) : "memory ?",
                   field(g, "bus_id"), field(g, "uuid"));
  s += fmt::format("          PCIe Gen{} x{} of Gen{} x{} ({} per direction, from {})  P{}  NUMA {}  CPUs {}\n",
                   field(pcie, "gen"), field(pcie, "width"), field(pcie, "max_gen"), field(pcie, "max_width"),
                   text(pcie.value("peak_gbps", json()), " GB/s"), field(pcie, "source"), field(g, "pstate"),
                   field(g, "numa_node"), field(g, "cpu_affinity"));
  if (nv.value("active", 0) > 0) {
    std::string peers;
    for (const auto& p : nv["peers"])
      peers += fmt::format("{}{} x{}", peers.empty() ? "" : ", ", text(p["peer"]), text(p["links"]));
    s += fmt::format("          NVLink{} x{} = {} per direction (to {})\n", field(nv, "generation"),
                     nv["active"].dump(), text(nv.value("total_gbps", json()), " GB/s"), peers);
  } else {
    const auto& links = nv.value("links", json());
    s += links.is_null() ? "          NVLink: unknown (" + why(nv, "links") + ")\n"
                         : fmt::format("          NVLink: none active ({} links)\n", links.dump());
  }
}

// nvidia-smi topo -m's square: GPUi by GPUj, the link class in each cell.
void matrix_lines(std::string& s, const json& m) {
  if (m.size() < 2) return;
  s += "  GPU matrix (NV# = NVLink links, PIX/PXB = PCIe switches, PHB = host bridge, NODE/SYS = across "
       "bridges/sockets)\n";
  TextTable t;
  t.head_prefix = "    ";
  t.row_prefix = "    ";
  t.columns.push_back({.head = "", .min_width = 5});
  for (std::size_t j = 0; j < m.size(); ++j)
    t.columns.push_back({.head = fmt::format("GPU{}", j), .align = Align::right, .min_width = 5, .gap = " "});
  for (std::size_t i = 0; i < m.size(); ++i) {
    std::vector<std::string> cells{fmt::format("GPU{}", i)};
    for (const auto& cell : m[i]) cells.push_back(text(cell));
    t.add_row(std::move(cells));
  }
  s += render(t);
}

void nic_line(std::string& s, const json& n) {
  const auto& rate = n.value("rate_gbit", json());
  const std::string speed =
      rate.is_number() ? fmt::format("{:g} Gb/s", rate.get<double>()) : "speed unknown (" + why(n, "rate_gbit") + ")";
  std::string nearest;
  const json distances = n.value("gpu_distance", json::object());
  for (const auto& [gpu, d] : distances.items())
    if (d == "PIX" || d == "PXB") nearest += fmt::format(" {} {}", gpu, text(d));
  s += fmt::format("    {:<10} {:<8} {:<6} {}  MTU {}  fw {}  {}  {}  NUMA {}{}\n", field(n, "name"), field(n, "kind"),
                   field(n, "state"), speed, field(n, "mtu_bytes"), field(n, "firmware"), field(n, "driver"),
                   field(n, "bus_id"), field(n, "numa_node"), nearest.empty() ? "" : "  near" + nearest);
}

void path_lines(std::string& s, const json& paths) {
  s += "  paths (spec peak per direction, GB/s = 1e9 bytes/s)\n";
  for (const auto& p : paths) {
    const auto& peak = p.value("peak_gbps", json());
    s += fmt::format("    {:<6} {:<7} {:>10}  {}{}\n", field(p, "scope"), field(p, "class"),
                     peak.is_number() ? fmt::format("{:.4g} GB/s", peak.get<double>()) : "unknown", field(p, "basis"),
                     peak.is_number() ? "" : "  (" + p.value("unknown_reason", std::string()) + ")");
  }
}

void node_block(std::string& s, const json& inv, const std::vector<const json*>& ranks) {
  std::string gpu_of;
  for (const json* r : ranks)
    gpu_of +=
        fmt::format("\n    rank {} -> {} (runs on CPUs {})", text((*r)["rank"]),
                    (*r)["rank_gpu"].is_null() ? "no GPU" : "GPU" + text((*r)["rank_gpu"]), field(*r, "rank_cpus"));
  s += fmt::format("\nnode {} ({}){}\n", field(inv, "node"), field(inv, "host"), gpu_of);
  if (inv.contains("error")) {
    s += fmt::format("  inventory failed: {}\n", text(inv["error"]));
    return;
  }
  const auto& sw = inv["software"];
  s += fmt::format("  driver {}  NVML {}  CUDA driver {}  CUDA runtime {}  NCCL {}\n", field(sw, "driver"),
                   field(sw, "nvml"), field(sw, "cuda_driver"), field(sw, "cuda_runtime"), field(sw, "nccl"));
  s += fmt::format("  GPUs: {}{}\n", inv["gpus"].size(),
                   inv.contains("gpus_note") ? " (" + text(inv["gpus_note"]) + ")" : "");
  for (const auto& g : inv["gpus"]) gpu_lines(s, g);
  matrix_lines(s, inv["gpu_matrix"]);
  s += fmt::format("  NICs: {}\n", inv["nics"].size());
  for (const auto& n : inv["nics"]) nic_line(s, n);
  for (const auto& r : inv["rails"])
    s += fmt::format("  rail GPU{} -> {} ({})\n", text(r["gpu"]), text(r["nics"][0]), text(r["distance"]));
  path_lines(s, inv["paths"]);
  s += fmt::format("  flags: {}\n", inv["flags"].empty() ? "none" : "");
  for (const auto& f : inv["flags"]) s += fmt::format("    {}\n", text(f));
  std::map<std::string, std::vector<std::string>> unknown;
  collect_unknown(inv["software"], "", unknown);
  for (const auto& g : inv["gpus"]) collect_unknown(g, "GPU" + text(g["index"]) + ".", unknown);
  for (const auto& n : inv["nics"]) collect_unknown(n, text(n["name"]) + ".", unknown);
  if (!unknown.empty()) s += "  unknown, and why:\n";
  for (const auto& [reason, keys] : unknown) {
    std::string list;
    for (std::size_t i = 0; i < keys.size() && i < 6; ++i) list += (i ? ", " : "") + keys[i];
    if (keys.size() > 6) list += fmt::format(" and {} more", keys.size() - 6);
    s += fmt::format("    {}: {}\n", list, reason);
  }
}

}  // namespace

std::string format_report(const std::vector<json>& inventories, const std::vector<Difference>& differences) {
  std::map<int, std::vector<const json*>> nodes;  // node index -> its ranks' lines
  for (const auto& inv : inventories) nodes[inv.value("node", 0)].push_back(&inv);
  std::string s = fmt::format("fabricbench topo: {} rank{} on {} node{}\n", inventories.size(),
                              inventories.size() == 1 ? "" : "s", nodes.size(), nodes.size() == 1 ? "" : "s");
  for (const auto& [node, ranks] : nodes) node_block(s, *ranks.front(), ranks);
  s += differences.empty() ? "\nheterogeneity: none, every rank has the same GPUs, software and NICs\n"
                           : "\nheterogeneity: these differ between ranks\n";
  for (const auto& d : differences) {
    s += fmt::format("  {}\n", d.attribute);
    for (const auto& h : d.values) {
      std::string hosts;
      for (const auto& host : h.hosts) hosts += (hosts.empty() ? "" : ", ") + host;
      s += fmt::format("    {:<40} {}\n", h.value, hosts);
    }
  }
  return s;
}

}  // namespace fb::topo
