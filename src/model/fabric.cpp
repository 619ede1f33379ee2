// Links from presets and from measured results files; the time of one
// collective on a link.
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

const Curve* find_curve(const Link& link, Op op, int nranks) {
  for (const auto& c : link.curves)
    if (c.nranks == nranks && parse_op(c.op) == op) return &c;
  return nullptr;
}

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

// Rail rows run every rail of a node at once: per node they move groups x bytes.
Curve to_node_level(Curve c) {
  for (auto& p : c.points) p.bytes *= c.groups;
  c.groups = 1;
  c.fit = fit_alpha_beta(c.points);
  return c;
}

// alpha per hop and bandwidth per rank from the fit of the most telling op.
void derive_alpha_bw(Link& link) {
  static constexpr Op kPreferred[] = {Op::all_reduce, Op::reduce_scatter, Op::all_gather, Op::sendrecv,
                                      Op::unidir,     Op::alltoall,       Op::broadcast,  Op::reduce};
  for (const Op op : kPreferred) {
    const Curve* best = nullptr;
    for (const auto& c : link.curves)
      if (parse_op(c.op) == op && c.fit.valid() && (c.nranks >= 2 || is_pair_op(op)) && (!best || c.nranks > best->nranks))
        best = &c;
    if (!best) continue;
    // alpha from the fit (small sizes weigh in), bandwidth from the largest
    // size: the regime the model's bucket-sized collectives live in.
    const int steps = ring_steps(op, best->nranks);
    link.alpha_us = best->fit.alpha_us / steps;
    link.bw_gbps = best->tail_gbps() * ring_wire_bytes(op, best->nranks, 1.0);
    link.source = fmt::format("alpha {:.3g} us per hop from the {} fit on {} ranks (fit error {:.0f}% rms over {} "
                              "sizes), {:.3g} GB/s per rank at its largest size ({} bytes)",
                              link.alpha_us, best->op, best->nranks, 100 * best->fit.rms_rel_error, best->fit.points,
                              link.bw_gbps, static_cast<long long>(best->points.back().bytes));
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
  try {
    Results r = read_results(path);
    if (r.measurements.empty()) throw UsageError(fmt::format("results file '{}' has no measurement rows", path));
    return r;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
}

std::string preset_names(const std::vector<NetworkPreset>& list) {
  std::string out;
  for (const auto& p : list) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace

std::string_view name(Basis basis) {
  switch (basis) {
    case Basis::measured: return "measured";
    case Basis::fit: return "fit";
    case Basis::preset: return "preset";
    default: return "model";
  }
}

Timed link_time(const Link& link, Op op, int nranks, double bytes) {
  const Basis formula = link.curves.empty() ? Basis::preset : Basis::model;
  if (ring_steps(op, nranks) == 0 || bytes <= 0) return {0.0, formula};
  if (const Curve* c = find_curve(link, op, nranks)) {
    return {c->time_us(bytes), c->covers(bytes) ? Basis::measured : Basis::fit};
  }
  return {ring_time_us(op, nranks, bytes, link.alpha_us, link.bw_gbps), formula};
}

Link network_link(const NetworkPreset& p, int nics) {
  Link l;
  l.label = fmt::format("{}x{}", nics, p.name);
  l.alpha_us = p.alpha_us;
  l.line_gbps = p.line_gbps * nics;
  l.bw_gbps = l.line_gbps * p.achievable;
  l.source = p.source;
  return l;
}

Link node_link(const NodePreset& p) {
  Link l;
  l.label = p.name;
  l.alpha_us = p.alpha_us;
  l.line_gbps = p.line_gbps;
  l.bw_gbps = p.line_gbps * p.achievable;
  l.source = p.source;
  return l;
}

Link measured_link(const Results& results, std::string_view scope, std::string_view label) {
  Link l;
  l.label = std::string(label);
  for (auto& c : fit_curves(results)) {
    if (c.scope != scope) continue;
    l.curves.push_back(scope == "rail" ? to_node_level(std::move(c)) : std::move(c));
  }
  if (l.curves.empty())
    throw UsageError(fmt::format("results file '{}' has no rows at scope '{}' (it has: {})", results.path, scope,
                                 scope_list(scopes_in(results))));
  derive_alpha_bw(l);
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
  // "8x400g-ndr-ib": NICs per node before the x.
  int nics = 0;
  std::size_t i = 0;
  while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i])) && nics < 100000)
    nics = nics * 10 + (spec[i++] - '0');
  std::string_view name = spec;
  if (i > 0 && i < spec.size() && spec[i] == 'x') {
    name = spec.substr(i + 1);
    if (nics < 1 || nics > 64) throw UsageError(fmt::format("network '{}': NICs per node must be 1 to 64", spec));
  } else {
    nics = 0;
  }
  const NetworkPreset& p = presets.network(name, fmt::format("network '{}'", spec));
  return network_link(p, nics > 0 ? nics : p.nics_per_node);
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

}  // namespace fb::model
