#include "check_quote.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/model/fabric.hpp"
#include "preset_flags.hpp"

namespace fb::cli {
namespace {

const model::Quote& find_quote(const model::QuoteSet& set, const std::string& name, const std::string& file) {
  std::vector<std::string> names;
  for (const auto& q : set.quotes) names.push_back(q.name);
  if (name.empty() && set.quotes.size() == 1) return set.quotes.front();
  const auto it = std::find_if(set.quotes.begin(), set.quotes.end(), [&](const auto& q) { return q.name == name; });
  if (it == set.quotes.end())
    throw UsageError(
        fmt::format("--quote-name '{}': {} has no such quote; give one of: {}", name, file, fmt::join(names, ", ")));
  return *it;
}

accept::Rule rule_of(std::string name, accept::HardwareItem item, int count = 0) {
  accept::Rule r;
  r.name = std::move(name);
  r.kind = accept::RuleKind::hardware;
  r.hardware.item = item;
  r.hardware.count = count;
  return r;
}

// The NIC promise: the count before the x, the preset's line rate per NIC.
accept::Rule nic_rule(const model::Quote& q, const model::Presets& presets, const std::string& where,
                      const std::string& base_dir) {
  model::Link link;
  try {
    link = model::resolve_network(q.network, presets, base_dir);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", where, e.what()));
  }
  if (link.measured())
    throw UsageError(
        fmt::format("{}: network '{}' is a results file, which sells no NICs to check; name a network "
                    "preset such as 8x400g-ndr-ib",
                    where, q.network));
  const auto& preset = presets.network(link.label.substr(link.label.find('x') + 1), where);
  const double gbit = preset.line_gbps * 8;  // presets give GB/s per direction; topo reads Gbit/s
  auto r = rule_of(fmt::format("{}: {} NICs per node at {:g} Gbit/s (networks.yaml {} line rate)", where, link.nics,
                               gbit, preset.name),
                   accept::HardwareItem::nics_per_node, link.nics);
  r.hardware.nic_rate_gbit = gbit;
  // An RDMA network is sold as RDMA ports: a TCP port at the rate is not one of them.
  if (preset.transport == model::Transport::rdma) r.hardware.nic_kinds = {"IB", "RoCE", "EFA"};
  return r;
}

// A rank between nodes gets no less than this share of its NICs' line rate
// in all_reduce busbw: the per-NIC floor of the shipped h100-8x-ndr400
// profile, 40 of NDR's 50 GB/s, where about 48 is published (nccl-tests
// issues #290, #319: the "80-90% of line rate" that tuned RDMA reaches).
constexpr double kPromisedShareOfLine = 0.80;

// The scope that shows the network's rate per rank, and the NICs' line rate
// each of its ranks should reach: a rail (every GPU at once, each with its
// share of the node's NICs) where the profile measures one, else inter (one
// rank per node, with the NICs of one GPU, at least one).
struct NetworkView {
  Scope scope = Scope::inter;
  double nics_per_rank = 1;
};

NetworkView network_view(const model::Quote& q, int nics, bool rail_measured) {
  const double share = static_cast<double>(nics) / std::max(1, q.gpus_per_node);
  if (rail_measured) return {Scope::rail, share};
  return {Scope::inter, std::max(1.0, share)};
}

// The largest all_reduce size the profile's sweeps measure at `scope`; 0: none.
std::uint64_t largest_measured(const std::vector<accept::Sweep>& sweeps, Scope scope) {
  std::uint64_t largest = 0;
  for (const auto& s : sweeps) {
    const auto& o = s.options;
    if (std::find(o.ops.begin(), o.ops.end(), Op::all_reduce) == o.ops.end()) continue;
    if (std::find(o.scopes.begin(), o.scopes.end(), scope) == o.scopes.end()) continue;
    largest = std::max(largest, expand(o.grid).back());
  }
  return largest;
}

// The busbw a quote's network promises between nodes (see kPromisedShareOfLine),
// judged at the largest size the profile measures there. Where it measures
// none the rule is still added at 1 GiB: it finds no row and is not judged
// (a failure), as any promise the run cannot show.
accept::Rule busbw_rule(const model::Quote& q, int nics, const model::NetworkPreset& preset,
                        const std::vector<accept::Sweep>& sweeps, const std::string& where) {
  const bool rail = largest_measured(sweeps, Scope::rail) > 0;
  const NetworkView view = network_view(q, nics, rail);
  const std::uint64_t measured = largest_measured(sweeps, view.scope);
  const std::uint64_t bytes = measured > 0 ? measured : (1ull << 30);
  const double floor_gbps = kPromisedShareOfLine * view.nics_per_rank * preset.line_gbps;
  accept::Rule r;
  r.name = fmt::format(
      "{}: all_reduce busbw {} at {} >= {:g} GB/s ({:g} of {:g} NICs' line rate per rank, networks.yaml "
      "{} line_gbps {:g}){}",
      where, name(view.scope), format_bytes(bytes), floor_gbps, kPromisedShareOfLine, view.nics_per_rank, preset.name,
      preset.line_gbps, measured > 0 ? "" : "; the profile's sweeps measure no all_reduce there");
  r.kind = accept::RuleKind::absolute;
  r.rows.op = "all_reduce";
  r.rows.scope = std::string(name(view.scope));
  r.rows.bytes = bytes;
  r.metric = accept::Metric::busbw;
  r.limits.push_back(accept::parse_limit(fmt::format("{:g} GB/s", floor_gbps), accept::Bound::min, r.name));
  return r;
}

// The NVLink domain promise of a quote whose node preset joins several hosts
// over NVLink (GB200 NVL72: 72 GPUs): the quoted GPUs in domains of the
// preset's size, or all of them in one where the quote sells fewer; none
// for a quote whose NVLink ends at the host.
std::optional<accept::Rule> domain_rule(const model::Quote& q, const model::GpuPreset& gpu,
                                        const model::Presets& presets, const std::string& where) {
  const std::string& name = q.node.empty() ? gpu.node : q.node;
  if (name.empty() || name.find('/') != std::string::npos || name.ends_with(".jsonl")) return std::nullopt;
  const model::NodePreset& node = presets.node(name, where + ": node");
  if (node.domain_gpus <= q.gpus_per_node) return std::nullopt;
  const int gpus = std::min(node.domain_gpus, q.gpus_per_node * q.nodes);
  return rule_of(fmt::format("{}: its GPUs in NVLink domains of at least {} GPUs (nodes.yaml {} domain_gpus {})", where,
                             gpus, node.name, node.domain_gpus),
                 accept::HardwareItem::nvlink_domain, gpus);
}

}  // namespace

std::vector<accept::Rule> quote_rules(const model::QuoteSet& set, const std::string& quote_name,
                                      const model::Presets& presets, const std::string& file) {
  const model::Quote& q = find_quote(set, quote_name, file);
  const std::string where = fmt::format("quote {}", q.name);
  const auto& gpu = presets.gpu(q.gpu, where + ": gpu");
  if (gpu.nvml_names.empty())
    throw UsageError(
        fmt::format("{}: gpu preset '{}' lists no nvml_names, so no inventory can show it; add them in "
                    "a presets file the quotes file names under presets:",
                    where, gpu.name));
  auto model =
      rule_of(fmt::format("{}: GPU {} (gpus.yaml {} nvml_names)", where, fmt::join(gpu.nvml_names, " or "), gpu.name),
              accept::HardwareItem::gpu);
  model.hardware.gpu_names = gpu.nvml_names;
  std::vector<accept::Rule> out{model,
                                rule_of(fmt::format("{}: {} GPUs per node (gpus_per_node)", where, q.gpus_per_node),
                                        accept::HardwareItem::gpus_per_node, q.gpus_per_node)};
  // A one-node quote may name no network: it sells nothing between nodes.
  if (!q.network.empty())
    out.push_back(nic_rule(q, presets, where, std::filesystem::path(file).parent_path().string()));
  if (auto domain = domain_rule(q, gpu, presets, where)) out.push_back(std::move(*domain));
  out.push_back(rule_of(fmt::format("{}: {} nodes (nodes)", where, q.nodes), accept::HardwareItem::nodes, q.nodes));
  return out;
}

std::optional<accept::Rule> quote_busbw_rule(const model::QuoteSet& set, const std::string& quote_name,
                                             const model::Presets& presets, const std::string& file,
                                             const std::vector<accept::Sweep>& sweeps) {
  const model::Quote& q = find_quote(set, quote_name, file);
  if (q.network.empty() || q.nodes < 2) return std::nullopt;
  const std::string where = fmt::format("quote {}", q.name);
  // All its GPUs in one NVLink domain that spans hosts (NVL72 trays): its
  // rows between hosts run over NVLink, and no scope yet measures the
  // network between domains.
  const auto& gpu = presets.gpu(q.gpu, where + ": gpu");
  const std::string& node_name = q.node.empty() ? gpu.node : q.node;
  if (const auto domain = domain_rule(q, gpu, presets, where);
      domain && presets.node(node_name, where + ": node").domain_gpus > presets.node(node_name, where).gpus &&
      domain->hardware.count >= q.gpus_per_node * q.nodes)
    return std::nullopt;
  // quote_rules resolved the network already: a bad one was refused there.
  const model::Link link =
      model::resolve_network(q.network, presets, std::filesystem::path(file).parent_path().string());
  const auto& preset = presets.network(link.label.substr(link.label.find('x') + 1), where);
  return busbw_rule(q, link.nics, preset, sweeps, where);
}

void add_quote_rules(const std::string& file, const std::string& quote_name, accept::Profile& profile) {
  const model::QuoteSet set = model::load_quotes(file);
  const model::Presets presets = presets_of(PresetFlags{}, set.presets);
  for (auto& r : quote_rules(set, quote_name, presets, file)) profile.rules.push_back(std::move(r));
  if (auto busbw = quote_busbw_rule(set, quote_name, presets, file, profile.sweeps))
    profile.rules.push_back(std::move(*busbw));
}

}  // namespace fb::cli
