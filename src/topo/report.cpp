// The readable report rank 0 prints: one block per node, then the differences.
#include "fabricbench/topo/report.hpp"

#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
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

// Who else may use the GPU: its compute mode, MIG, and the processes on it
// (the flags name the others).
void sharing_line(std::string& s, const json& g) {
  const auto& procs = g.value("processes", json());
  std::string users = "?";
  if (procs.is_array()) {
    std::size_t ours = 0;
    for (const auto& p : procs) ours += p.value("ours", false) ? 1 : 0;
    users = fmt::format("{} ({} of this job)", procs.size(), ours);
  }
  const auto& mig = g.value("mig", json());
  s += fmt::format("          compute mode {}  MIG {}  processes {}\n", field(g, "compute_mode"),
                   mig.is_boolean() ? (mig.get<bool>() ? "on" : "off") : "?", users);
}

// The GPU's multi-node NVLink domain, where it has one or NVML cannot say;
// nothing for a GPU outside any (a host's own NVLink only).
void fabric_line(std::string& s, const json& g) {
  const auto& f = g.value("fabric", json());
  if (f.is_null()) {
    // Only where NVML answered the rest: without NVML every line says so already.
    if (g.contains("fabric") && g.value("model", json()).is_string())
      s += "          NVLink domain: unknown (" + why(g, "fabric") + ")\n";
    return;
  }
  if (f.value("state", "") == "not_supported") return;
  s += fmt::format("          NVLink domain {}  fabric {}{}\n", f.value("domain", "?"), f.value("state", "?"),
                   f.contains("status") ? " (" + f["status"].get<std::string>() + ")" : "");
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
  sharing_line(s, g);
  fabric_line(s, g);
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

// The report's tables: a head over every column, units in the heads (Gbit/s
// for line rates, GB/s = 1e9 bytes/s for peaks), so the figures stand bare.
TextTable report_table(const std::string& indent, std::vector<TextColumn> columns) {
  TextTable t;
  t.head_prefix = t.row_prefix = indent;
  t.columns = std::move(columns);
  return t;
}

TextColumn figure(const char* head) { return {.head = head, .align = Align::right}; }

// A figure bare, "?" when unknown (the row says why, and "unknown, and why" below).
std::string number(const json& v, const char* format) {
  return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : "?";
}

void nic_lines(std::string& s, const json& nics) {
  s += fmt::format("  NICs: {}\n", nics.size());
  if (nics.empty()) return;
  TextTable t = report_table("    ", {{.head = "name"},
                                      {.head = "kind"},
                                      {.head = "state"},
                                      figure("rate (Gbit/s)"),
                                      figure("MTU (bytes)"),
                                      {.head = "firmware"},
                                      {.head = "driver"},
                                      {.head = "bus_id"},
                                      figure("NUMA"),
                                      {.head = "near GPUs (PCIe switch)"},
                                      {.head = "note"}});
  for (const auto& n : nics) {
    const auto& rate = n.value("rate_gbit", json());
    std::string near;
    const json distances = n.value("gpu_distance", json::object());
    for (const auto& [gpu, d] : distances.items())
      if (d == "PIX" || d == "PXB") near += fmt::format("{}{} {}", near.empty() ? "" : " ", gpu, text(d));
    t.add_row({field(n, "name"), field(n, "kind"), field(n, "state"), number(rate, "{:g}"), field(n, "mtu_bytes"),
               field(n, "firmware"), field(n, "driver"), field(n, "bus_id"), field(n, "numa_node"), near,
               rate.is_number() ? "" : "speed unknown (" + why(n, "rate_gbit") + ")"});
  }
  // The note column is there only when a row has one.
  if (std::none_of(t.rows.begin(), t.rows.end(), [](const TextRow& r) { return !r.cells.back().empty(); }))
    t.columns.pop_back();
  s += render(t);
}

void path_lines(std::string& s, const json& paths) {
  s += "  paths (spec peak per direction, GB/s = 1e9 bytes/s)\n";
  if (paths.empty()) return;
  TextTable t = report_table("    ", {{.head = "scope"}, {.head = "class"}, figure("peak (GB/s)"), {.head = "basis"}});
  for (const auto& p : paths) {
    const auto& peak = p.value("peak_gbps", json());
    // Why a peak is unknown goes with its basis: the last column, so no other is pushed out.
    const std::string unknown = peak.is_number() ? "" : "  (" + p.value("unknown_reason", std::string()) + ")";
    t.add_row({field(p, "scope"), field(p, "class"), number(peak, "{:.4g}"), field(p, "basis") + unknown});
  }
  s += render(t);
}

// One row per value of each attribute that differs, the attribute named on its first.
void difference_lines(std::string& s, const std::vector<Difference>& differences) {
  if (differences.empty()) return;
  TextTable t = report_table("  ", {{.head = "attribute"}, {.head = "value"}, {.head = "hosts"}});
  for (const auto& d : differences)
    for (std::size_t i = 0; i < d.values.size(); ++i)
      t.add_row({i == 0 ? d.attribute : "", d.values[i].value, fmt::format("{}", fmt::join(d.values[i].hosts, ", "))});
  s += render(t);
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
  nic_lines(s, inv["nics"]);
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
  s += format_domains(nvlink_domains(inventories));
  s += differences.empty() ? "\nheterogeneity: none, every rank has the same GPUs, software and NICs\n"
                           : "\nheterogeneity: these differ between ranks\n";
  difference_lines(s, differences);
  return s;
}

}  // namespace fb::topo
