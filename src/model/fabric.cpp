// Links from presets and from measured results files.
#include "fabricbench/model/fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/layout.hpp"
#include "fabricbench/model/formulas.hpp"

namespace fb::model {
namespace {

std::set<std::string> scopes_in(const Results& r) {
  std::set<std::string> out;
  for (const auto& m : r.measurements) out.insert(m.scope);
  return out;
}

std::string scope_list(const std::set<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

// What a link priced below a cliff says about the sizes past it.
std::string cliff_words(const Curve& c, double busbw_per_algbw) {
  if (!c.cliff) return "";
  const auto at = static_cast<long long>(c.points[c.cliff->at].bytes);
  return fmt::format(
      "; the curve falls off a cliff at {} bytes: busbw {:.0f}x below its best before it up to {} bytes (the library "
      "switching algorithm, or the link failing at large sizes: `run` warned), so the link is priced "
      "below it; past it, {:.4g} GB/s",
      at, c.cliff->factor(), static_cast<long long>(c.points.back().bytes), c.gbps_at(c.cliff->at) * busbw_per_algbw);
}

// Latency per ring step and bandwidth from the fit of the most telling op:
// latency from the fit's alpha (small sizes), bandwidth from the largest
// size (the regime bucket-sized collectives live in), or the largest below a
// cliff (the link's rate before the library switched algorithm), as busbw.
// Rail rows run every rail of a node at once: the node moves groups x that.
void derive_hop_bw(Link& link) {
  static constexpr Op kPreferred[] = {Op::all_reduce, Op::reduce_scatter, Op::all_gather, Op::sendrecv,
                                      Op::unidir,     Op::alltoall,       Op::broadcast,  Op::reduce};
  for (const Op op : kPreferred) {
    const Curve* best = nullptr;
    for (const auto& c : link.curves)
      if (parse_op(c.op) == op && c.fit.valid() && (c.nranks >= 2 || is_pair_op(op)) && (!best || c.nranks > best->nranks))
        best = &c;
    if (!best) continue;
    const int steps = std::max(1, ring_steps(op, best->nranks));
    const std::size_t priced = best->priced_point();
    link.hop_us = best->fit.alpha_us / steps;
    const double busbw_per_algbw = std::max(1.0, ring_wire_bytes(op, best->nranks, 1.0)) * best->groups;
    link.bw_gbps = best->gbps_at(priced) * busbw_per_algbw;
    link.source = fmt::format(
        "{:.3g} us per step from the {} fit on {} ranks (alpha {:.3g} us over {} steps, {:.0f}% "
        "rms over its small sizes), {:.4g} GB/s busbw{} at {} size ({} bytes){}",
        link.hop_us, best->op, best->nranks, best->fit.alpha_us, steps, 100 * best->fit.alpha_rms_rel_error,
        link.bw_gbps, best->groups > 1 ? fmt::format(" ({} rails at once)", best->groups) : "",
        best->cliff ? "its largest pre-cliff" : "its largest", static_cast<long long>(best->points[priced].bytes),
        cliff_words(*best, busbw_per_algbw));
    return;
  }
  throw UsageError(fmt::format("{}: no collective at this scope grows with size, so no bandwidth can be fitted; "
                               "sweep larger sizes (-e 64M or more)",
                               link.label));
}

struct FileSpec {
  std::string path;
  std::string scope;  // "" = the default for the level
};

bool is_file_spec(std::string_view spec) {
  const auto name = spec.substr(0, spec.rfind('@'));
  return name.find('/') != std::string_view::npos || name.ends_with(".jsonl") || name.ends_with(".json");
}

FileSpec split_file_spec(std::string_view spec, const std::string& base_dir) {
  FileSpec f;
  const auto at = spec.rfind('@');
  f.path = std::string(spec.substr(0, at));
  if (at != std::string_view::npos) f.scope = std::string(spec.substr(at + 1));
  if (!base_dir.empty() && std::filesystem::path(f.path).is_relative()) f.path = base_dir + "/" + f.path;
  return f;
}

Results read_measured(const std::string& path) {
  Results r = load_results(path);
  if (r.measurements.empty()) throw UsageError(fmt::format("results file '{}' has no measurement rows", path));
  return r;
}

std::string preset_names(const std::vector<NetworkPreset>& list) {
  std::string out;
  for (const auto& p : list) out += (out.empty() ? "" : ", ") + fmt::format("{}x{}", p.nics_per_node, p.name);
  return out;
}

LinkKind kind_of(Transport t) { return t == Transport::rdma ? LinkKind::rdma : LinkKind::tcp; }
LinkKind kind_of(NodeFabric f) { return f == NodeFabric::nvlink ? LinkKind::nvlink : LinkKind::pcie; }

}  // namespace

std::string_view name(Basis basis) {
  switch (basis) {
    case Basis::measured: return "measured";
    case Basis::fit: return "fit";
    case Basis::preset: return "preset";
    case Basis::model: break;
  }
  return "model";
}

Link network_link(const NetworkPreset& p, int nics) {
  Link l;
  l.label = fmt::format("{}x{}", nics, p.name);
  l.kind = kind_of(p.transport);
  l.nics = nics;
  l.line_gbps = p.line_gbps * nics;
  l.bw_gbps = l.line_gbps * p.achievable;
  l.extra_hop_us = p.extra_hop_us;
  l.source = p.source;
  return l;
}

Link node_link(const NodePreset& p) {
  Link l;
  l.label = p.name;
  l.kind = kind_of(p.fabric);
  l.line_gbps = p.line_gbps;
  l.bw_gbps = p.line_gbps * p.achievable;
  l.nvls_gbps = p.nvls_gbps;
  l.domain_gpus = p.domain_gpus > p.gpus ? p.domain_gpus : 0;
  l.extra_hop_us = p.extra_hop_us;
  l.source = p.source;
  return l;
}

Link measured_link(const Results& results, std::string_view scope, std::string_view label) {
  Link l;
  l.label = std::string(label);
  l.scope = std::string(scope);
  l.measured_nodes = std::max(1, results.header.nodes);  // -1: a record that does not say
  for (auto& c : fit_curves(results))
    if (c.scope == scope) l.curves.push_back(std::move(c));
  if (l.curves.empty())
    throw UsageError(fmt::format("results file '{}' has no rows at scope '{}' (it has: {})", results.path, scope,
                                 scope_list(scopes_in(results))));
  derive_hop_bw(l);
  return l;
}

Link resolve_network(std::string_view spec, const Presets& presets, const std::string& base_dir) {
  if (is_file_spec(spec)) {
    const FileSpec f = split_file_spec(spec, base_dir);
    const Results r = read_measured(f.path);
    std::string scope = f.scope;
    if (scope.empty()) {
      const auto scopes = scopes_in(r);
      scope = scopes.contains("rail") ? "rail" : scopes.contains("inter") ? "inter" : "";
      if (scope.empty())
        throw UsageError(fmt::format(
            "results file '{}' has no inter-node rows (scope inter or rail; it has: {}), so it says nothing about "
            "the network between nodes. Measure across nodes with `fabricbench run --scope all`, let one of its "
            "scopes stand in for the network ('{}@global'), or use a network preset: {}",
            f.path, scope_list(scopes), f.path, preset_names(presets.networks)));
    }
    return measured_link(r, scope, fmt::format("{}@{}", f.path, scope));
  }
  // "8x400g-ndr-ib": NICs per node before the x, always.
  int nics = 0;
  std::size_t i = 0;
  while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i])) && nics < 100000)
    nics = nics * 10 + (spec[i++] - '0');
  if (i > 0 && i < spec.size() && spec[i] == 'x') {
    const std::string_view name = spec.substr(i + 1);
    const NetworkPreset& p = presets.network(name, fmt::format("network '{}'", spec));
    if (nics < 1 || nics > 64) throw UsageError(fmt::format("network '{}': NICs per node must be 1 to 64", spec));
    return network_link(p, nics);
  }
  const NetworkPreset& p = presets.network(spec, fmt::format("network '{}'", spec));
  throw UsageError(fmt::format("network '{}': say how many NICs each node has, e.g. 1x{} or {}x{} ({} is usual for {}); "
                               "the count changes the answer {}-fold",
                               spec, p.name, p.nics_per_node, p.name, p.nics_per_node, p.name,
                               std::max(2, p.nics_per_node)));
}

Link resolve_node(std::string_view spec, const Presets& presets, const std::string& base_dir) {
  if (!is_file_spec(spec)) return node_link(presets.node(spec, "node"));
  const FileSpec f = split_file_spec(spec, base_dir);
  const Results r = read_measured(f.path);
  std::string scope = f.scope;
  if (scope.empty()) {
    const auto scopes = scopes_in(r);
    const bool one_node = r.header.nodes == 1;
    scope = scopes.contains("intra") ? "intra" : (one_node && scopes.contains("global")) ? "global" : "";
    if (scope.empty())
      throw UsageError(fmt::format("results file '{}' has no intra-node rows (scope intra, or global on one node; it "
                                   "has: {}); measure with `fabricbench run --scope intra` or use a node preset",
                                   f.path, scope_list(scopes)));
  }
  return measured_link(r, scope, fmt::format("{}@{}", f.path, scope));
}

std::string describe(const Link& l, bool network) {
  if (l.measured()) return fmt::format("{}: measured, {}", l.label, l.source);
  if (network)
    return fmt::format("{}: {} NIC{} x {:.4g} GB/s x {:.0f}% = {:.4g} GB/s per node, {}{}", l.label, l.nics, l.nics == 1 ? "" : "s",
                       l.line_gbps / std::max(1, l.nics), 100 * l.bw_gbps / l.line_gbps, l.bw_gbps,
                       l.kind == LinkKind::rdma ? "RDMA" : "TCP sockets",
                       l.extra_hop_us > 0 ? fmt::format(", +{:.3g} us per step", l.extra_hop_us) : "");
  return fmt::format("{}: {:.4g} GB/s per GPU x {:.0f}% = {:.4g} GB/s busbw, {}{}{}", l.label, l.line_gbps,
                     100 * l.bw_gbps / l.line_gbps, l.bw_gbps, l.kind == LinkKind::nvlink ? "NVLink" : "PCIe",
                     l.nvls_gbps > 0 ? fmt::format(", NVLS {:.4g} GB/s", l.nvls_gbps) : "",
                     l.extra_hop_us > 0 ? fmt::format(", +{:.3g} us per step", l.extra_hop_us) : "");
}

}  // namespace fb::model
