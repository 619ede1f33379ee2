// Data loading against the step: needed = global_batch x bytes_per_sample per
// predicted step, delivered = the storage record's aggregate read.
#include "fabricbench/model/data_loading.hpp"

#include <fmt/format.h>

#include <map>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/sizes.hpp"

namespace fb::model {
namespace {

std::optional<StorageRate> at(const std::vector<StorageRate>& rates, int nodes) {
  for (const auto& r : rates)
    if (r.nodes == nodes) return r;
  return std::nullopt;
}

// "1 node", "8 nodes".
std::string nodes_text(int nodes) { return fmt::format("{} node{}", nodes, nodes == 1 ? "" : "s"); }

std::string counts_of(const std::vector<StorageRate>& rates) {
  std::string out;
  for (const auto& r : rates) out += (out.empty() ? "" : ", ") + std::to_string(r.nodes);
  return out;
}

// "at 8 nodes the shared filesystem delivers 1.1 GB/s against 2.4 GB/s needed: cache the dataset locally"
std::string advice(const DataPoint& p) {
  const std::string head = fmt::format("at {} the shared filesystem delivers {:.3g} GB/s against {:.3g} GB/s needed",
                                       nodes_text(p.nodes), p.shared->gbps, p.needed_gbps);
  if (p.keeps_up) return fmt::format("{}: it keeps up ({:.2g}x)", head, p.shared->gbps / p.needed_gbps);
  if (!p.local) return head + ": cache the dataset locally (measure the local disks with --local to see if they keep up)";
  if (p.local->gbps >= p.needed_gbps)
    return fmt::format("{}: cache the dataset locally (the local disks read {:.3g} GB/s)", head, p.local->gbps);
  return fmt::format("{}: the local disks read {:.3g} GB/s, short too: data loading bounds the step (cache in "
                     "memory, or fewer bytes per sample)",
                     head, p.local->gbps);
}

}  // namespace

std::vector<StorageRate> storage_rates(const std::vector<StorageLine>& lines, const std::string& target,
                                       const std::string& pattern) {
  std::map<int, StorageRate> best;
  for (const auto& l : lines) {
    if (l.target != target || l.pattern != pattern || l.cache == "cached") continue;
    auto& b = best[l.nodes];
    if (l.aggregate_gbps <= b.gbps) continue;
    b = {l.nodes, l.aggregate_gbps,
         fmt::format("{} {}, {}, {} blocks", l.fs_type, l.path, l.mode, format_bytes(l.block_bytes))};
  }
  std::vector<StorageRate> out;
  for (const auto& [n, r] : best) out.push_back(r);
  return out;
}

std::vector<DataPoint> data_loading(const Workload& w, const std::vector<ScalePoint>& points,
                                    const std::vector<StorageLine>& storage) {
  if (!w.data.given())
    throw UsageError(fmt::format("workload {} has no data: section: give data: {{bytes_per_sample: 600K}} or "
                                 "{{bytes_per_token: 2}} to compare its loading with the storage record",
                                 w.name));
  const auto shared = storage_rates(storage, "path", w.data.pattern);
  const auto local = storage_rates(storage, "local", w.data.pattern);
  if (shared.empty())
    throw UsageError(fmt::format("the storage record has no {} rows of --path that are the storage's (not the page "
                                 "cache's): run fabricbench storage with --patterns {}",
                                 w.data.pattern, w.data.pattern == "seq_read" ? "seq" : "small"));
  std::vector<DataPoint> out;
  for (const auto& sp : points) {
    DataPoint p;
    p.nodes = sp.nodes;
    p.why = sp.why;
    p.bytes_per_step = static_cast<double>(w.global_batch) * w.data.bytes_per_sample;
    if (p.why.empty()) {
      p.step_us = sp.step.step_us;
      p.needed_gbps = p.bytes_per_step / (p.step_us * 1e3);  // bytes per us / 1e3 = GB/s
      p.shared = at(shared, sp.nodes);
      p.local = at(local, sp.nodes);
      if (!p.shared)
        p.why = fmt::format("storage not measured at {} (measured at {})", nodes_text(sp.nodes), counts_of(shared));
    }
    if (p.why.empty()) {
      p.keeps_up = p.shared->gbps >= p.needed_gbps;
      p.advice = advice(p);
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace fb::model
