// `model data`: does data loading keep up with the step at each node count.
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include "fabricbench/model/report.hpp"

namespace fb::model {

Table data_table(const std::vector<DataPoint>& points, const std::string& network) {
  Table t;
  t.header = {"nodes", "step_ms", "needed_gbps", "shared_gbps", "local_gbps", "keeps_up"};
  for (const auto& p : points) {
    if (!p.why.empty()) {
      t.rows.push_back({std::to_string(p.nodes), "-", "-", "-", "-", "-"});
      t.notes.push_back(fmt::format("{} node{}: {}", p.nodes, p.nodes == 1 ? "" : "s", p.why));
      continue;
    }
    t.rows.push_back({std::to_string(p.nodes), cell(p.step_us / 1e3, 1), cell(p.needed_gbps, 3),
                      cell(p.shared->gbps, 3), p.local ? cell(p.local->gbps, 3) : "-", p.keeps_up ? "yes" : "no"});
    t.notes.push_back(p.advice + " (" + p.shared->label + ")");
  }
  t.notes.push_back(fmt::format("needed = global batch x bytes per sample per predicted step (network {}); "
                                "delivered = the best aggregate read measured at that node count, page-cache rows "
                                "left out",
                                network.empty() ? "none: one node" : network));
  return t;
}

json data_json(const std::string& workload, const std::string& network, const std::vector<DataPoint>& points) {
  json rows = json::array();
  for (const auto& p : points) {
    json r = {{"nodes", p.nodes}};
    if (!p.why.empty()) {
      r["why"] = p.why;
    } else {
      r["step_us"] = p.step_us;
      r["bytes_per_step"] = p.bytes_per_step;
      r["needed_gbps"] = p.needed_gbps;
      r["shared_gbps"] = p.shared->gbps;
      r["shared"] = p.shared->label;
      r["local_gbps"] = p.local ? json(p.local->gbps) : json(nullptr);
      r["keeps_up"] = p.keeps_up;
      r["advice"] = p.advice;
    }
    rows.push_back(std::move(r));
  }
  return {{"workload", workload}, {"network", network}, {"data_loading", rows}};
}

}  // namespace fb::model
