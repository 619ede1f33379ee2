#include "fabricbench/core/inventory_gpus.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace fb {
namespace {

using json = nlohmann::ordered_json;

std::optional<InventoryGpuUser> other_user(const json& p) {
  if (!p.is_object() || p.value("ours", false)) return std::nullopt;
  InventoryGpuUser u;
  if (const auto pid = p.find("pid"); pid != p.end() && pid->is_number_integer()) u.pid = pid->get<std::int64_t>();
  if (const auto n = p.find("name"); n != p.end() && n->is_string()) u.name = n->get<std::string>();
  if (const auto m = p.find("used_memory_bytes"); m != p.end() && m->is_number_unsigned())
    u.used_memory_bytes = m->get<std::uint64_t>();
  return u;
}

void add_sharing(const json& g, InventoryGpu& out) {
  if (const auto c = g.find("compute_mode"); c != g.end() && c->is_string()) out.compute_mode = c->get<std::string>();
  if (const auto m = g.find("mig"); m != g.end() && m->is_boolean()) out.mig = m->get<bool>();
  const auto procs = g.find("processes");
  if (procs == g.end() || !procs->is_array()) return;
  out.others.emplace();
  for (const auto& p : *procs)
    if (auto u = other_user(p)) out.others->push_back(std::move(*u));
}

InventoryGpu gpu_of(const json& g, std::size_t place) {
  InventoryGpu out;
  out.index = static_cast<int>(place);
  if (!g.is_object()) return out;
  if (const auto i = g.find("index"); i != g.end() && i->is_number_integer() && *i >= 0 && *i < (1 << 20))
    out.index = i->get<int>();
  if (const auto m = g.find("model"); m != g.end() && m->is_string()) out.model = m->get<std::string>();
  add_sharing(g, out);
  return out;
}

}  // namespace

std::string gpu_user_text(std::int64_t pid, const std::string& name, std::optional<std::uint64_t> used_memory_bytes) {
  const std::string memory = used_memory_bytes
                                 ? fmt::format("{:.1f} GiB", static_cast<double>(*used_memory_bytes) / (1ull << 30))
                                 : "its memory unknown";
  return fmt::format("pid {} ({}, {})", pid, name.empty() ? "not in this node's /proc" : name, memory);
}

std::vector<InventoryGpu> rank_gpus(const InventoryLine& line) {
  const json& inv = line.line.get();
  if (!inv.is_object()) return {};
  const auto gpus = inv.find("gpus");
  if (gpus == inv.end() || !gpus->is_array()) return {};
  const auto picked = inv.find("rank_gpu");
  if (picked != inv.end() && picked->is_number_integer()) {
    const auto i = picked->get<std::int64_t>();
    if (i >= 0 && i < static_cast<std::int64_t>(gpus->size()))
      return {gpu_of((*gpus)[static_cast<std::size_t>(i)], static_cast<std::size_t>(i))};
  }
  std::vector<InventoryGpu> out;
  for (std::size_t i = 0; i < gpus->size(); ++i) out.push_back(gpu_of((*gpus)[i], i));
  return out;
}

std::vector<std::string> rdma_nics_up(const InventoryLine& line) {
  std::vector<std::string> out;
  const json& j = line.line.get();
  const auto nics = j.is_object() ? j.find("nics") : j.end();
  if (!j.is_object() || nics == j.end() || !nics->is_array()) return out;
  for (const auto& nic : *nics) {
    if (!nic.is_object() || !nic.value("up", false)) continue;
    const std::string kind = nic.value("kind", "");
    if (kind == "IB" || kind == "RoCE" || kind == "EFA") out.push_back(nic.value("name", "?") + " (" + kind + ")");
  }
  return out;
}

}  // namespace fb
