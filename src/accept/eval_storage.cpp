// storage rules: a figure of `fabricbench storage` lines (aggregate or the
// slowest node's GB/s) at one node count against a floor. The worst matching
// row decides; a page-cache figure (cache: cached) is RAM, not storage, and
// never judges a storage rule.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "eval_parts.hpp"
#include "fabricbench/core/sizes.hpp"

namespace fb::accept {
namespace {

bool matches(const StorageLine& line, const StorageFilter& f) {
  return line.target == f.target && line.pattern == f.pattern && (f.mode.empty() || line.mode == f.mode) &&
         (!f.block_bytes || line.block_bytes == *f.block_bytes);
}

// "path seq_read direct 16 MiB blocks" as the rule asks for it.
std::string asked(const StorageFilter& f) {
  std::string out = f.target + " " + f.pattern;
  if (!f.mode.empty()) out += " " + f.mode;
  if (f.block_bytes) out += fmt::format(" {} blocks", format_bytes(*f.block_bytes));
  return out;
}

double storage_figure(const StorageLine& line, StorageMetric metric) {
  return metric == StorageMetric::aggregate_gbps ? line.aggregate_gbps : line.node_min_gbps;
}

// "on fb2" for the per-node figure: the node whose rate is the line's minimum.
std::string slowest_node(const StorageLine& line) {
  if (line.node_gbps.empty() || line.node_gbps.size() != line.hosts.size()) return {};
  const auto it = std::min_element(line.node_gbps.begin(), line.node_gbps.end());
  return " on " + line.hosts[static_cast<std::size_t>(it - line.node_gbps.begin())];
}

}  // namespace

Verdict eval_storage(const Rule& rule, const Results& run) {
  const StorageFilter& f = rule.storage;
  if (run.storage.empty())
    return skipped(rule,
                   "no storage lines in this run: storage rules judge a `fabricbench storage --out FILE` record, "
                   "with `check --results FILE`");
  std::vector<const StorageLine*> rows;
  std::set<int> counts;
  for (const auto& line : run.storage)
    if (matches(line, f)) {
      rows.push_back(&line);
      counts.insert(line.nodes);
    }
  if (rows.empty()) return skipped(rule, fmt::format("no {} rows in this run", asked(f)));
  const int nodes = f.nodes ? *f.nodes : *counts.rbegin();
  if (!counts.contains(nodes))
    return skipped(rule, fmt::format("{} was measured at {} nodes, not at {}", asked(f), fmt::join(counts, ", "), nodes));
  std::erase_if(rows, [&](const StorageLine* l) { return l->nodes != nodes; });
  const auto cached = std::erase_if(rows, [](const StorageLine* l) { return l->cache == "cached"; });
  if (rows.empty())
    return skipped(rule, fmt::format("every {} row at {} nodes is a page-cache figure (cache: cached), RAM not "
                                     "storage: measure with --direct on, or on a filesystem that drops its cache",
                                     asked(f), nodes));
  const Limit& limit = rule.limits.front();
  const auto worst = *std::min_element(rows.begin(), rows.end(), [&](const StorageLine* a, const StorageLine* b) {
    return storage_figure(*a, rule.storage_metric) < storage_figure(*b, rule.storage_metric);
  });
  Verdict v = start_verdict(rule);
  v.unit = "GB/s";
  const double measured = storage_figure(*worst, rule.storage_metric);
  judge(v, limit.bound, measured, limit.value, limit.text);
  const bool per_node = rule.storage_metric == StorageMetric::node_min_gbps;
  v.reason = fmt::format("{} {} at {} nodes ({} {}, {}, {} blocks, cache {}): {} {}{}{}{}", worst->target,
                         worst->pattern, nodes, worst->fs_type, worst->path, worst->mode,
                         format_bytes(worst->block_bytes), worst->cache, per_node ? "slowest node" : "aggregate",
                         figure(measured, "GB/s"), per_node ? slowest_node(*worst) : "",
                         rows.size() > 1 ? fmt::format(" (worst of {} rows)", rows.size()) : "",
                         cached ? fmt::format("; {} page-cache rows left out", cached) : "");
  return v;
}

}  // namespace fb::accept
