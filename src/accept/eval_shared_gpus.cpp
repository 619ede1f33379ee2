// The `shared_gpus` rule: every GPU the ranks drive was theirs alone when the
// run started (inventory `gpus[]`: processes, mig, compute_mode):
//   - kind: shared_gpus
// A GPU fails when a process that is not one of the job's ranks has a
// context on it (another job, or another container when the pod did not
// request nvidia.com/gpu), when it is split by MIG (a rank then gets one
// instance's share of SMs and memory, and no peer-to-peer), or when its
// compute mode prohibits contexts. Figures measured on a shared GPU measure
// a share of it, and an acceptance on them judges the neighbour too.
#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "eval_parts.hpp"
#include "fabricbench/core/inventory_gpus.hpp"

namespace fb::accept {
namespace {

// Why the GPU is not the job's alone; empty when it is.
std::vector<std::string> sharing_of(const InventoryGpu& g) {
  std::vector<std::string> why;
  if (g.others)
    for (const auto& u : *g.others) why.push_back(gpu_user_text(u.pid, u.name, u.used_memory_bytes));
  if (g.mig.value_or(false)) why.emplace_back("MIG mode on");
  if (g.compute_mode == "prohibited") why.emplace_back("compute mode prohibited");
  return why;
}

bool says_who_uses_it(const InventoryGpu& g) { return g.others || g.mig || !g.compute_mode.empty(); }

}  // namespace

Verdict eval_shared_gpus(const Rule& rule, const Results& run) {
  if (run.inventory.empty()) return skipped(rule, "no inventory lines in this run: who else used its GPUs is unknown");
  std::map<std::pair<std::string, int>, std::vector<std::string>> shared;  // (host, GPU) -> why
  std::size_t judged = 0;
  for (const auto& line : run.inventory) {
    const std::string host = line.host.empty() ? fmt::format("rank {}", line.rank) : line.host;
    for (const InventoryGpu& g : rank_gpus(line)) {
      if (!says_who_uses_it(g)) continue;
      const auto key = std::pair{host, g.index};
      if (shared.contains(key)) continue;  // another rank of the node named it
      ++judged;
      if (auto why = sharing_of(g); !why.empty()) shared.emplace(key, std::move(why));
    }
  }
  if (judged == 0)
    return skipped(rule, fmt::format("no inventory line says who else uses its GPUs ({} lines: no GPU, NVML absent "
                                     "or without the calls, or a record before schema 1.8)",
                                     run.inventory.size()));
  Verdict v = start_verdict(rule);
  v.unit = kUnitSharedGpus;
  judge(v, Bound::max, static_cast<double>(shared.size()), 0, "0");
  if (shared.empty()) {
    v.reason = fmt::format("each of the {} GPUs the ranks drive was theirs alone when the run started", judged);
    return v;
  }
  std::vector<std::string> parts;
  std::map<std::string, int> per_host;
  for (const auto& [key, why] : shared) {
    parts.push_back(fmt::format("{} GPU{}: {}", key.first, key.second, fmt::join(why, ", ")));
    ++per_host[key.first];
  }
  for (const auto& [host, gpus] : per_host) v.offenders.push_back({host, -1, "", static_cast<double>(gpus), v.unit});
  v.reason = fmt::format(
      "{} of {} GPUs the ranks drive were not theirs alone when the run started: {}. Their figures measure a "
      "share of the GPU: run where each rank has its GPU to itself (on Kubernetes, request nvidia.com/gpu per "
      "pod: docs/kubernetes.md; MIG off: nvidia-smi -mig 0)",
      shared.size(), judged, fmt::join(parts, "; "));
  return v;
}

}  // namespace fb::accept
