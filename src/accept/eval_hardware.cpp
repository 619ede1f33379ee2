// The `hardware` rule: the cluster holds what was sold, read from the
// inventory lines topo writes into every check record:
//   - kind: hardware
//     gpu: [NVIDIA H100 80GB HBM3]   # every rank's GPU is one of these (NVML names)
//   - kind: hardware
//     gpus_per_node: 8               # every node shows at least 8 GPUs
//   - kind: hardware
//     nics_per_node: 8               # every node has 8 NICs up at 400 Gbit/s or faster
//     nic_rate: 400 Gbit/s
//     nic_kind: [IB]                 # optional: only these kinds count (topo's IB, RoCE, EFA, Ethernet)
//   - kind: hardware
//     nodes: 2                       # the run spans at least 2 nodes
//   - kind: hardware
//     nvlink_domain: 16              # the run's GPUs in multi-node NVLink domains (NVL72) of 16 or more
// One promise per rule, so a check names the one the cluster breaks.
#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "eval_parts.hpp"
#include "fabricbench/core/inventory_gpus.hpp"
#include "fabricbench/topo/report.hpp"
#include "profile_parts.hpp"

namespace fb::accept {
namespace {

std::string lower_case(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string node_name_of(const InventoryLine& line) {
  return !line.host.empty() ? line.host : fmt::format("rank {}", line.rank);
}

// The node's whole GPU list (topo's gpus[]), or nullopt for a line that has none.
std::optional<std::size_t> node_gpus(const InventoryLine& line) {
  const auto& j = line.line.get();
  if (!j.is_object() || !j.contains("gpus") || !j["gpus"].is_array()) return std::nullopt;
  return j["gpus"].size();
}

// NICs up on the line's node at `rate_gbit` or faster, of one of `kinds` (empty: any).
std::optional<int> nics_meeting(const InventoryLine& line, const HardwarePromise& p) {
  const auto& j = line.line.get();
  if (!j.is_object() || !j.contains("nics") || !j["nics"].is_array()) return std::nullopt;
  int n = 0;
  for (const auto& nic : j["nics"]) {
    if (!nic.is_object() || !nic.value("up", false)) continue;
    const auto kind = nic.value("kind", "");
    if (!p.nic_kinds.empty() && std::find(p.nic_kinds.begin(), p.nic_kinds.end(), kind) == p.nic_kinds.end()) continue;
    const auto rate = nic.find("rate_gbit");
    if (rate != nic.end() && rate->is_number() && rate->get<double>() >= p.nic_rate_gbit) ++n;
  }
  return n;
}

// The fewest of something any node has, from one line per node.
struct Fewest {
  double count = 0;
  std::string where;
  bool known = false;
  void see(double n, const std::string& w) {
    if (!known || n < count) count = n, where = w, known = true;
  }
};

Verdict at_least(const Rule& rule, const Fewest& f, const char* unit, const std::string& what) {
  Verdict v = start_verdict(rule);
  v.unit = unit;
  judge(v, Bound::min, f.count, rule.hardware.count, std::to_string(rule.hardware.count));
  v.reason = fmt::format("fewest {} on a node: {:g} on {}", what, f.count, f.where);
  return v;
}

Verdict eval_gpu_model(const Rule& rule, const Results& run) {
  std::vector<std::string> off;
  std::size_t named = 0;
  for (const auto& line : run.inventory)
    for (const auto& g : rank_gpus(line)) {
      ++named;
      const auto& names = rule.hardware.gpu_names;
      if (std::none_of(names.begin(), names.end(), [&](const auto& n) { return lower_case(n) == lower_case(g.model); }))
        off.push_back(fmt::format("{} on {}", g.model.empty() ? "unnamed GPU" : g.model, node_name_of(line)));
    }
  if (named == 0)
    return skipped(rule, fmt::format("no inventory line names a GPU ({} lines: no GPU here, or NVML absent)",
                                     run.inventory.size()));
  Verdict v = start_verdict(rule);
  v.unit = kUnitGpus;
  judge(v, Bound::max, static_cast<double>(off.size()), 0, "0");
  v.expected_text = fmt::format("<= 0 GPUs other than {}", fmt::join(rule.hardware.gpu_names, " or "));
  v.reason = off.empty() ? fmt::format("{} GPUs, all {}", named, fmt::join(rule.hardware.gpu_names, " or "))
                         : fmt::format("not the GPU promised: {}", fmt::join(off, ", "));
  return v;
}

Verdict eval_per_node(const Rule& rule, const Results& run) {
  const bool gpus = rule.hardware.item == HardwareItem::gpus_per_node;
  Fewest fewest;
  for (const auto& line : run.inventory) {
    if (gpus) {
      if (const auto n = node_gpus(line)) fewest.see(static_cast<double>(*n), node_name_of(line));
    } else if (const auto n = nics_meeting(line, rule.hardware)) {
      fewest.see(*n, node_name_of(line));
    }
  }
  if (!fewest.known) return skipped(rule, fmt::format("no inventory line lists the node's {}", gpus ? "GPUs" : "NICs"));
  if (gpus) return at_least(rule, fewest, kUnitGpus, "GPUs");
  const auto kinds = rule.hardware.nic_kinds.empty() ? std::string("NICs")
                                                     : fmt::format("{} NICs", fmt::join(rule.hardware.nic_kinds, "/"));
  return at_least(rule, fewest, kUnitNics, fmt::format("{} up at >= {:g} Gbit/s", kinds, rule.hardware.nic_rate_gbit));
}

Verdict eval_nodes(const Rule& rule, const Results& run) {
  if (run.header.nodes < 1) return skipped(rule, "the run header does not say how many nodes ran");
  Verdict v = start_verdict(rule);
  v.unit = kUnitNodes;
  judge(v, Bound::min, run.header.nodes, rule.hardware.count, std::to_string(rule.hardware.count));
  v.reason = fmt::format("the run spans {} nodes", run.header.nodes);
  return v;
}

// The run's GPUs by their fabric info (topo's `fabric`, schema 1.10): how
// many have it, how many sit in no completed domain (named), and why none
// can be judged when no GPU has it.
struct FabricSeen {
  int with_info = 0;
  std::vector<std::string> outside;
  std::string unknown_why;
};

FabricSeen fabric_seen(const Results& run) {
  FabricSeen s;
  std::vector<std::string> seen;  // host:index, each GPU once
  for (const auto& line : run.inventory) {
    const auto& j = line.line.get();
    if (!j.is_object() || !j.contains("gpus") || !j["gpus"].is_array()) continue;
    for (const auto& g : j["gpus"]) {
      const std::string id = fmt::format("{} GPU{}", node_name_of(line), g.value("index", 0));
      if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(id);
      const auto f = g.find("fabric");
      if (f == g.end() || !f->is_object()) {
        if (f != g.end() && s.unknown_why.empty() && g.contains("unknown") && g["unknown"].contains("fabric"))
          s.unknown_why = g["unknown"]["fabric"].get<std::string>();
        continue;
      }
      ++s.with_info;
      if (f->value("state", "") != "completed" || f->contains("status"))
        s.outside.push_back(fmt::format("{} ({})", id, f->value("state", "?")));
    }
  }
  return s;
}

Verdict eval_nvlink_domain(const Rule& rule, const Results& run) {
  const FabricSeen seen = fabric_seen(run);
  if (seen.with_info == 0)
    return skipped(rule, seen.unknown_why.empty()
                             ? std::string("no GPU of the record has fabric info (a record before schema 1.10, or "
                                           "no GPU listed)")
                             : "no GPU's NVLink domain is known: " + seen.unknown_why);
  std::vector<nlohmann::ordered_json> lines;
  for (const auto& l : run.inventory) lines.push_back(l.line.get());
  const auto domains = topo::nvlink_domains(lines);
  Fewest fewest;
  for (const auto& d : domains) fewest.see(d.gpus, fmt::format("{} on {}", d.id, fmt::join(d.hosts, ", ")));
  // A GPU in no domain is one alone: NCCL reaches it over the network only.
  if (!seen.outside.empty()) fewest.see(1, fmt::format("{} outside any", fmt::join(seen.outside, ", ")));
  Verdict v = start_verdict(rule);
  v.unit = kUnitGpus;
  judge(v, Bound::min, fewest.count, rule.hardware.count, std::to_string(rule.hardware.count));
  v.reason = fmt::format("{} NVLink domain{} of the run's GPUs; the smallest: {:g} GPUs, {}", domains.size(),
                         domains.size() == 1 ? "" : "s", fewest.count, fewest.where);
  return v;
}

}  // namespace

void parse_hardware(const Field& f, Rule& r) {
  auto& p = r.hardware;
  const std::map<std::string, HardwareItem> items{{"gpu", HardwareItem::gpu},
                                                  {"gpus_per_node", HardwareItem::gpus_per_node},
                                                  {"nics_per_node", HardwareItem::nics_per_node},
                                                  {"nodes", HardwareItem::nodes},
                                                  {"nvlink_domain", HardwareItem::nvlink_domain}};
  int given = 0;
  for (const auto& [key, item] : items)
    if (f.has(key)) p.item = item, ++given;
  if (given != 1)
    f.fail("a hardware rule states one promise: gpu, gpus_per_node, nics_per_node, nodes or nvlink_domain");
  const bool nics = p.item == HardwareItem::nics_per_node;
  if (!nics && (f.has("nic_rate") || f.has("nic_kind"))) f.fail("nic_rate and nic_kind go with nics_per_node");
  if (p.item == HardwareItem::gpu) {
    p.gpu_names = f["gpu"].list();
    return;
  }
  const auto key = p.item == HardwareItem::gpus_per_node   ? "gpus_per_node"
                   : nics                                  ? "nics_per_node"
                   : p.item == HardwareItem::nvlink_domain ? "nvlink_domain"
                                                           : "nodes";
  p.count = static_cast<int>(f[key].integer(1, 100000));
  if (!nics) return;
  // The rate is written as a bandwidth ("400 Gbit/s"); parse_limit gives GB/s.
  const auto rate = parse_limit(f["nic_rate"].text(), Bound::min, f.where() + ": nic_rate");
  if (rate.dimension != Dimension::bandwidth) f["nic_rate"].fail("give a NIC's line rate with its unit: 400 Gbit/s");
  p.nic_rate_gbit = rate.value * 8;
  if (auto k = f.find("nic_kind")) {
    p.nic_kinds = k->list();
    for (const auto& kind : p.nic_kinds)
      if (kind != "IB" && kind != "RoCE" && kind != "EFA" && kind != "Ethernet")
        k->fail(fmt::format("'{}' is not a NIC kind topo names; allowed: IB, RoCE, EFA, Ethernet", kind));
  }
}

Verdict eval_hardware(const Rule& rule, const Results& run) {
  if (rule.hardware.item == HardwareItem::nodes) return eval_nodes(rule, run);
  if (run.inventory.empty()) return skipped(rule, "no inventory lines in this run");
  if (rule.hardware.item == HardwareItem::gpu) return eval_gpu_model(rule, run);
  if (rule.hardware.item == HardwareItem::nvlink_domain) return eval_nvlink_domain(rule, run);
  return eval_per_node(rule, run);
}

}  // namespace fb::accept
