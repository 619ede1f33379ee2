// The `mixed_gpus` rule: every rank of the partition on one GPU model, from
// the inventory lines (each rank's GPU, or its node's GPUs when the rank has
// none picked), unless the profile allows a mix:
//   - kind: mixed_gpus
//     allow: [A100-SXM4-80GB, H800]   # optional: the models that may be mixed
// A mixed partition makes synchronous data parallelism run at the slowest
// card: the fast cards wait for it every step.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "eval_parts.hpp"
#include "fabricbench/core/inventory_gpus.hpp"
#include "profile_parts.hpp"

namespace fb::accept {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The GPU models a rank runs on: its own GPU's, or every GPU of its node.
std::vector<std::string> models_of(const InventoryLine& line) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const InventoryGpu& g : rank_gpus(line))
    if (!g.model.empty() && seen.insert(g.model).second) out.push_back(g.model);
  return out;
}

bool allowed(const std::string& model, const std::vector<std::string>& allow) {
  return std::any_of(allow.begin(), allow.end(),
                     [&](const std::string& a) { return lower(model).find(lower(a)) != std::string::npos; });
}

}  // namespace

void parse_mixed_gpus(const Field& f, Rule& r) {
  if (auto v = f.find("allow")) {
    r.allowed_gpus = v->list();
    if (r.allowed_gpus.size() < 2)
      v->fail("list the two or more GPU models a mixed partition may hold, as NVML names them (or a part of the name: "
              "A100-SXM4-80GB, H800)");
  }
}

Verdict eval_mixed_gpus(const Rule& rule, const Results& run) {
  if (run.inventory.empty()) return skipped(rule, "no inventory lines in this run");
  std::map<std::string, std::set<std::string>> hosts_by_model;
  std::size_t unknown = 0;
  for (const auto& line : run.inventory) {
    const auto models = models_of(line);
    if (models.empty()) ++unknown;
    for (const auto& m : models)
      hosts_by_model[m].insert(line.host.empty() ? fmt::format("rank {}", line.rank) : line.host);
  }
  if (hosts_by_model.empty())
    return skipped(rule, fmt::format("no inventory line names a GPU model ({} lines: no GPU, or NVML absent)",
                                     run.inventory.size()));
  std::string mix;
  std::vector<std::string> outside;
  for (const auto& [model, hosts] : hosts_by_model) {
    std::string list;
    for (const auto& h : hosts) list += (list.empty() ? "" : ", ") + h;
    mix += fmt::format("{}{} on {}", mix.empty() ? "" : "; ", model, list);
    if (!rule.allowed_gpus.empty() && !allowed(model, rule.allowed_gpus)) outside.push_back(model);
  }
  Verdict v = start_verdict(rule);
  v.unit = kUnitModels;
  const auto models = static_cast<double>(hosts_by_model.size());
  const std::string unknown_note = unknown ? fmt::format(" ({} inventory lines name no GPU model)", unknown) : "";
  if (rule.allowed_gpus.empty()) {
    judge(v, Bound::max, models, 1, "1");
    v.reason = models == 1 ? fmt::format("one GPU model: {}{}", mix, unknown_note)
                           : fmt::format("mixed partition: {}; synchronous data parallelism runs at the slowest card "
                                         "and the fast cards wait for it every step; a profile that "
                                         "accepts the mix lists its models under allow:{}",
                                         mix, unknown_note);
    return v;
  }
  judge(v, Bound::max, static_cast<double>(outside.size()), 0, "0");
  v.expected_text = "<= 0 models outside allow";
  std::string allow;
  for (const auto& a : rule.allowed_gpus) allow += (allow.empty() ? "" : ", ") + a;
  v.reason = outside.empty() ? fmt::format("{} allowed ({}){}", mix, allow, unknown_note)
                             : fmt::format("not in allow ({}): {}; the partition holds {}{}", allow,
                                           fmt::format("{}", fmt::join(outside, ", ")), mix, unknown_note);
  return v;
}

}  // namespace fb::accept
