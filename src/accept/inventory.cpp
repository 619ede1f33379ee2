// Rules on inventory lines (topo's, right after the header of every run and
// check record; docs/results-schema.md): spec peaks per scope, and
// heterogeneity across ranks and nodes as `fabricbench topo` finds it.
#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

#include "eval_parts.hpp"
#include "fabricbench/topo/report.hpp"

namespace fb::accept {
namespace {

// Inventory scopes whose paths carry a collective at `scope`: a global
// collective crosses the node's fabric and, with several nodes, the network.
std::set<std::string> path_scopes(const Results& run, const std::string& scope) {
  if (scope != "global") return {scope};
  const bool several = run.header.nodes > 1;
  return several ? std::set<std::string>{"intra", "inter"} : std::set<std::string>{"intra"};
}

// A line's value of each compared field, as `fabricbench topo` compares
// them (topo::fingerprint). A value with an unreadable part ("unknown") is
// left out: unknown is not a difference. A line of the wrong shape gives none.
std::map<std::string, std::string> known_fields(const InventoryLine& line) {
  std::map<std::string, std::string> out;
  try {
    for (auto& [field, value] : topo::fingerprint(line.line.get()))
      if (value.find("unknown") == std::string::npos) out.emplace(field, std::move(value));
  } catch (const nlohmann::json::exception&) {
    out.clear();
  }
  return out;
}

// Inventory classes the traffic of a row with this `path` label ran on
// (docs/results-schema.md: MPI's and NCCL's labels); empty: any class.
std::set<std::string> path_classes(const std::string& label) {
  std::set<std::string> out;
  const auto has = [&](const char* s) { return label.find(s) != std::string::npos; };
  if (has("NET/IB")) out.insert({"IB", "RoCE"});  // NCCL's IB transport serves RoCE too
  if (has("Libfabric")) out.insert("EFA");        // NET/AWS Libfabric: the aws-ofi-nccl plugin over EFA
  if (has("NET/Socket") || label == "tcp") out.insert("TCP");
  if (has("NVLink") || has("NVLS") || has("MNNVL")) out.insert("NVLink");
  if (has("/PCIe")) out.insert("PCIe");
  if (has("SHM") || label == "shm") out.insert("SHM");
  return out;
}

std::set<std::string> classes_of(const std::vector<std::string>& row_paths) {
  std::set<std::string> out;
  for (const auto& label : row_paths) {
    const auto c = path_classes(label);
    if (c.empty()) return {};  // one row's traffic could be on any class
    out.insert(c.begin(), c.end());
  }
  return out;
}

// Does this rank's GPU have a rail of its own (topo's `rails` and `rank_gpu`)?
bool has_gpu_rail(const InventoryLine& line) {
  const auto& j = line.line.get();
  if (!j.is_object() || !j.contains("rank_gpu") || !j["rank_gpu"].is_number_integer()) return false;
  const auto rails = j.find("rails");
  if (rails == j.end() || !rails->is_array()) return false;
  for (const auto& r : *rails)
    if (r.is_object() && r.value("gpu", -1) == j["rank_gpu"].get<int>()) return true;
  return false;
}

// The inventory scope whose paths bound `scope` on this line: an inter row's
// RDMA traffic from a GPU leaves by that GPU's rail.
std::string path_scope_on(const InventoryLine& line, const std::string& scope, const std::set<std::string>& classes) {
  const bool rdma = classes.count("IB") || classes.count("RoCE") || classes.count("EFA");
  if (scope == "inter" && rdma && has_gpu_rail(line)) return "rail";
  return scope;
}

std::string where_of(const InventoryLine& line) {
  return !line.host.empty() ? line.host : fmt::format("rank {}", line.rank);
}

}  // namespace

SpecPeak spec_peak(const Results& run, const std::string& scope, const std::vector<std::string>& row_paths) {
  SpecPeak peak;
  if (run.inventory.empty()) {
    peak.reason = "no inventory lines in this run";
    return peak;
  }
  const auto wanted = path_scopes(run, scope);
  const auto classes = classes_of(row_paths);
  std::string unknown;
  for (const auto& line : run.inventory) {
    // The inter scope's ranks are each node's local rank 0.
    if (scope == "inter" && line.local_rank > 0) continue;
    std::set<std::string> on_line;
    for (const auto& s : wanted) on_line.insert(path_scope_on(line, s, classes));
    for (const auto& p : line.paths) {
      if (!on_line.count(p.scope)) continue;
      if (!classes.empty() && !classes.count(p.cls)) continue;
      if (!p.peak_gbps || *p.peak_gbps <= 0) {
        if (unknown.empty()) unknown = p.unknown_reason.empty() ? "peak_gbps is unknown" : p.unknown_reason;
        continue;
      }
      if (!peak.known || *p.peak_gbps < peak.gbps) {
        peak.known = true;
        peak.gbps = *p.peak_gbps;
        peak.basis = fmt::format("{}{}{}", p.cls, p.basis.empty() ? "" : ": ", p.basis);
      }
    }
  }
  if (!peak.known)
    peak.reason = fmt::format("no known spec peak for scope {} in the inventory: {}", scope,
                              !unknown.empty()  ? unknown
                              : classes.empty() ? fmt::format("no path with scope {}", fmt::join(wanted, ", "))
                                                : fmt::format("no path with scope {} of class {} (the rows' path)",
                                                              fmt::join(wanted, ", "), fmt::join(classes, "/")));
  return peak;
}

Verdict eval_heterogeneity(const Rule& rule, const Results& run) {
  const auto& lines = run.inventory;
  if (lines.empty()) return skipped(rule, "no inventory lines in this run");
  const auto fields = rule.fields.empty() ? inventory_fields() : rule.fields;
  std::vector<std::map<std::string, std::string>> values;
  for (const auto& line : lines) values.push_back(known_fields(line));
  std::vector<std::string> differ;
  std::vector<std::string> compared;
  std::vector<std::string> unknown;
  for (const auto& field : fields) {
    std::map<std::string, std::set<std::string>> where_by_value;
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (auto v = values[i].find(field); v != values[i].end()) where_by_value[v->second].insert(where_of(lines[i]));
    if (where_by_value.empty()) {
      unknown.push_back(field);
      continue;
    }
    compared.push_back(field);
    if (where_by_value.size() < 2) continue;
    std::string detail;
    for (const auto& [value, where] : where_by_value)
      detail += fmt::format("{}'{}' on {}", detail.empty() ? "" : "; ", value, fmt::join(where, ", "));
    differ.push_back(fmt::format("{} differs: {}", field, detail));
  }
  if (compared.empty())
    return skipped(rule,
                   fmt::format("the inventory lines carry none of the compared fields ({})", fmt::join(fields, ", ")));
  Verdict v = start_verdict(rule);
  v.unit = kUnitFields;
  judge(v, Bound::max, static_cast<double>(differ.size()), 0, "0");
  v.reason = differ.empty() ? fmt::format("{} alike across {} inventory lines", fmt::join(compared, ", "), lines.size())
                            : fmt::format("{}", fmt::join(differ, " | "));
  if (!unknown.empty()) v.reason += fmt::format(" (unknown: {})", fmt::join(unknown, ", "));
  return v;
}

}  // namespace fb::accept
