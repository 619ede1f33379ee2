// Rules on inventory lines (topo's, right after the header of every run and
// check record; docs/results-schema.md): spec peaks per scope, and
// heterogeneity across ranks and nodes as `fabricbench topo` finds it.
#include <fmt/format.h>

#include <map>
#include <set>

#include "eval_parts.hpp"
#include "fabricbench/topo/report.hpp"

namespace fb::accept {
namespace {

using json = nlohmann::ordered_json;

std::vector<const json*> lines_of(const Results& run, const char* type) {
  std::vector<const json*> out;
  for (const auto& line : run.lines)
    if (line.contains("type") && line["type"] == type) out.push_back(&line);
  return out;
}

std::string text_of(const json& j, const char* key, std::string fallback = {}) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// Inventory scopes whose paths carry a collective at `scope`: a global
// collective crosses the node's fabric and, with several nodes, the network.
std::set<std::string> path_scopes(const Results& run, const std::string& scope) {
  if (scope != "global") return {scope};
  const auto nodes = run.run().find("nodes");
  const bool several = nodes != run.run().end() && nodes->is_number_integer() && nodes->get<int>() > 1;
  return several ? std::set<std::string>{"intra", "inter"} : std::set<std::string>{"intra"};
}

// A line's value of each compared field, as `fabricbench topo` compares
// them (topo::fingerprint). A value with an unreadable part ("unknown") is
// left out: unknown is not a difference. A line of the wrong shape gives none.
std::map<std::string, std::string> known_fields(const json& line) {
  std::map<std::string, std::string> out;
  try {
    for (auto& [field, value] : topo::fingerprint(line))
      if (value.find("unknown") == std::string::npos) out.emplace(field, std::move(value));
  } catch (const json::exception&) {
    out.clear();
  }
  return out;
}

std::string where_of(const json& line) {
  const std::string host = text_of(line, "host");
  if (!host.empty()) return host;
  const auto rank = line.find("rank");
  return rank != line.end() && rank->is_number_integer() ? fmt::format("rank {}", rank->get<int>()) : "?";
}

std::string join_set(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

SpecPeak spec_peak(const Results& run, const std::string& scope) {
  SpecPeak peak;
  const auto lines = lines_of(run, "inventory");
  if (lines.empty()) {
    peak.reason = "no inventory lines in this run";
    return peak;
  }
  const auto wanted = path_scopes(run, scope);
  std::string unknown;
  for (const auto* line : lines) {
    const auto paths = line->find("paths");
    if (paths == line->end() || !paths->is_array()) continue;
    for (const auto& p : *paths) {
      if (!p.is_object() || !wanted.count(text_of(p, "scope"))) continue;
      const auto v = p.find("peak_gbps");
      if (v == p.end() || !v->is_number() || v->get<double>() <= 0) {
        if (unknown.empty()) unknown = text_of(p, "unknown_reason", "peak_gbps is unknown");
        continue;
      }
      if (!peak.known || v->get<double>() < peak.gbps) {
        peak.known = true;
        peak.gbps = v->get<double>();
        peak.basis = fmt::format("{}{}{}", text_of(p, "class"), p.contains("basis") ? ": " : "", text_of(p, "basis"));
      }
    }
  }
  if (!peak.known)
    peak.reason = fmt::format("no known spec peak for scope {} in the inventory: {}", scope,
                              unknown.empty() ? fmt::format("no path with scope {}", join_set(wanted)) : unknown);
  return peak;
}

Verdict eval_heterogeneity(const Rule& rule, const Results& run) {
  const auto lines = lines_of(run, "inventory");
  if (lines.empty()) return skipped(rule, "no inventory lines in this run");
  const auto fields = rule.fields.empty() ? inventory_fields() : rule.fields;
  std::vector<std::map<std::string, std::string>> values;
  for (const auto* line : lines) values.push_back(known_fields(*line));
  std::vector<std::string> differ;
  std::vector<std::string> compared;
  std::vector<std::string> unknown;
  for (const auto& field : fields) {
    std::map<std::string, std::set<std::string>> where_by_value;
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (auto v = values[i].find(field); v != values[i].end()) where_by_value[v->second].insert(where_of(*lines[i]));
    if (where_by_value.empty()) {
      unknown.push_back(field);
      continue;
    }
    compared.push_back(field);
    if (where_by_value.size() < 2) continue;
    std::string detail;
    for (const auto& [value, where] : where_by_value)
      detail += fmt::format("{}'{}' on {}", detail.empty() ? "" : "; ", value, join_set(where));
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
