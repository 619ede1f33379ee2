// The GPU mix a record holds (issue 25): what topo found on each node, as
// `model step --gpus-from` reads it, so a mixed partition is priced from
// the cards that are there rather than from a list typed by hand.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/inventory_gpus.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/model/mixed.hpp"

namespace fb::model {
namespace {

const GpuPreset& preset_of(const std::string& model, const std::string& host, const Presets& presets,
                           std::string_view where) {
  if (const GpuPreset* p = gpu_by_nvml_name(presets, model)) return *p;
  throw UsageError(fmt::format("{}: no GPU preset lists '{}' (on {}) among its nvml_names: give the mix with --gpus "
                               "GPU:COUNT, or add the name to a preset's nvml_names in a gpus.yaml (--presets)",
                               where, model, host));
}

std::string host_of(const InventoryLine& line) {
  if (!line.host.empty()) return line.host;
  return line.node >= 0 ? fmt::format("node {}", line.node) : fmt::format("rank {}", line.rank);
}

}  // namespace

std::vector<GpuGroup> gpu_mix_of(const Results& record, const Presets& presets, std::string_view what) {
  const std::string where = fmt::format("{} '{}'", what, record.path);
  if (record.inventory.empty())
    throw UsageError(fmt::format("{}: no inventory lines (`fabricbench topo --out` and `run --out` write them): give "
                                 "the mix with --gpus GPU:COUNT",
                                 where));
  // Each node's GPUs once, by index, however many of its ranks reported them.
  std::vector<std::string> hosts;
  std::map<std::string, std::map<int, std::string>> models_by_host;
  for (const InventoryLine& line : record.inventory) {
    const std::string host = host_of(line);
    if (!models_by_host.count(host)) hosts.push_back(host);
    auto& models = models_by_host[host];
    for (const InventoryGpu& g : rank_gpus(line))
      if (!g.model.empty()) models[g.index] = g.model;
  }
  std::vector<GpuGroup> mix;  // in the order the record meets each model: the pipeline's stage order
  for (const std::string& host : hosts)
    for (const auto& entry : models_by_host[host]) {
      const std::string& name = preset_of(entry.second, host, presets, where).name;
      const auto group = std::find_if(mix.begin(), mix.end(), [&](const GpuGroup& g) { return g.gpu == name; });
      if (group != mix.end()) ++group->count;
      else mix.push_back({name, 1});
    }
  if (mix.empty())
    throw UsageError(fmt::format("{}: no inventory line names a GPU model ({} lines: no GPU, or NVML absent): give the "
                                 "mix with --gpus GPU:COUNT",
                                 where, record.inventory.size()));
  return mix;
}

}  // namespace fb::model
