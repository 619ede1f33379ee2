// Rules on inventory lines (topo's, right after the header of every run and
// check record; docs/results-schema.md): spec peaks per scope, and
// heterogeneity across ranks and nodes as `fabricbench topo` finds it.
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

std::string where_of(const InventoryLine& line) {
  return !line.host.empty() ? line.host : fmt::format("rank {}", line.rank);
}

}  // namespace

SpecPeak spec_peak(const Results& run, const std::string& scope) {
  SpecPeak peak;
  if (run.inventory.empty()) {
    peak.reason = "no inventory lines in this run";
    return peak;
  }
  const auto wanted = path_scopes(run, scope);
  std::string unknown;
  for (const auto& line : run.inventory) {
    for (const auto& p : line.paths) {
      if (!wanted.count(p.scope)) continue;
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
                              unknown.empty() ? fmt::format("no path with scope {}", fmt::join(wanted, ", ")) : unknown);
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
