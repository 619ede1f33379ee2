// Tables and JSON for the fit, the step, scaling and memory.
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/units.hpp"
#include "fabricbench/model/report.hpp"
#include "fabricbench/model/units.hpp"

namespace fb::model {
namespace {

double busbw_factor_of(const Curve& c) {
  const auto op = parse_op(c.op);
  return op ? busbw_factor(*op, c.nranks) : 1.0;
}

// busbw from bytes and time, nccl-tests' way: factor * bytes / time.
double busbw_gbps(const Curve& c, double bytes, double time_us) {
  return time_us > 0 ? busbw_factor_of(c) * bytes / time_us / 1e3 : 0.0;
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string target_note(const StepCost& s) {
  if (s.inter_wire_bytes <= 0) return fmt::format("{}: no traffic crosses nodes", s.network);
  const std::string gives =
      s.network_line_gbps > 0 ? fmt::format("{} gives {} line rate ({:.3g} GB/s achievable)", s.network,
                                            format_line_rate(s.network_line_gbps), s.network_bw_gbps)
                              : fmt::format("{} measured {:.3g} GB/s", s.network, s.network_bw_gbps);
  const double t = 100 * s.exposed_target;
  if (!std::isfinite(s.target_gbps))
    return fmt::format("{}: exposed communication {:.1f}% of the step; no network bandwidth brings it to {:.3g}%: with "
                       "an infinitely fast network {:.1f}% stays exposed (latency, intra-node and pipeline terms); {}",
                       s.network, 100 * s.exposed_share, t, 100 * s.exposed_floor, gives);
  return fmt::format("{}: exposed communication {:.1f}% of the step; at most {:.3g}% needs >= {:.3g} GB/s per node "
                     "achievable with this workload's overlap windows; {}",
                     s.network, 100 * s.exposed_share, t, s.target_gbps, gives);
}

json assumptions_json(const StepCost& s) {
  json out = json::array();
  for (const auto& a : s.assumptions) out.push_back(a);
  return out;
}

std::string memory_note(const StepCost& s) {
  return fmt::format("warning: the workload needs {:.1f} GiB per GPU and one {} has {:.0f} GiB; see `fabricbench model "
                     "memory` for the ZeRO stage, DP or TP that fits",
                     s.memory_bytes / kBytesPerGiB, s.gpu, s.memory_capacity_bytes / kBytesPerGiB);
}

}  // namespace

void add_assumptions(Table& t, const std::vector<std::pair<std::string, const StepCost*>>& rows) {
  const auto in_all = [&](const std::string& a) {
    return std::all_of(rows.begin(), rows.end(), [&](const auto& r) {
      return std::find(r.second->assumptions.begin(), r.second->assumptions.end(), a) != r.second->assumptions.end();
    });
  };
  if (rows.empty()) return;
  for (const auto& a : rows.front().second->assumptions)
    if (in_all(a)) t.notes.push_back("assumption: " + a);
  for (const auto& [label, s] : rows)
    for (const auto& a : s->assumptions)
      if (!in_all(a)) t.notes.push_back(fmt::format("assumption ({}): {}", label, a));
  // A caveat once, however many rows carry it: it is about the kind of workload.
  std::vector<std::string> caveats;
  for (const auto& r : rows)
    for (const auto& c : r.second->caveats)
      if (std::find(caveats.begin(), caveats.end(), c) == caveats.end()) caveats.push_back(c);
  for (const auto& c : caveats) t.notes.push_back("caveat: " + c);
}

Table fit_table(const std::vector<Curve>& curves) {
  Table t;
  t.header = {"op",          "scope",        "dtype",      "ranks",       "groups",     "sizes",
              "min_bytes",   "max_bytes",    "alpha_us",   "alpha_rms_pct", "beta_gbps", "beta_rms_pct",
              "busbw_gbps",  "n_half_bytes", "fit_rms_pct", "fit_max_pct"};
  for (const auto& c : curves) {
    const bool ok = c.fit.valid();
    t.rows.push_back({c.op, c.scope, c.dtype, std::to_string(c.nranks), std::to_string(c.groups),
                      std::to_string(c.points.size()), std::to_string(static_cast<long long>(c.points.front().bytes)),
                      std::to_string(static_cast<long long>(c.points.back().bytes)), cell(c.fit.alpha_us, 2),
                      percent(c.fit.alpha_rms_rel_error), ok ? cell(c.fit.beta_gbps, 3) : "-",
                      ok ? percent(c.fit.beta_rms_rel_error) : "-",
                      ok ? cell(c.fit.beta_gbps * busbw_factor_of(c), 3) : "-",
                      ok ? std::to_string(std::llround(c.fit.n_half_bytes)) : "-", percent(c.fit.rms_rel_error),
                      percent(c.fit.max_rel_error)});
  }
  for (const auto& c : curves)
    if (c.cliff)
      t.notes.push_back(fmt::format(
          "cliff: {} {} on {} ranks falls off a cliff at {}: busbw {:.0f}x below its best before it, up to {}; beta "
          "comes from the sizes past it, and a link measured on this curve is priced below it ({})",
          c.op, c.scope, c.nranks, format_bytes(static_cast<std::uint64_t>(c.points[c.cliff->at].bytes)),
          c.cliff->factor(), format_bytes(static_cast<std::uint64_t>(c.points.back().bytes)),
          format_bytes(static_cast<std::uint64_t>(c.points[c.priced_point()].bytes))));
  t.notes.push_back("fit T(S) = alpha + S/beta on relative error: alpha from the smallest quarter of the sizes, beta "
                    "from the largest quarter, each with its rms error there; busbw = beta x the op's busbw factor; "
                    "n_half = alpha x beta; predictions use the measured curve inside [min_bytes, max_bytes], the fit "
                    "outside");
  return t;
}

json fit_json(const std::vector<Curve>& curves, const std::string& results_path) {
  json out = {{"type", "fit"}, {"results", results_path}, {"curves", json::array()}};
  for (const auto& c : curves) {
    json points = json::array();
    for (const auto& p : c.points)
      points.push_back({{"bytes", p.bytes},
                        {"time_us", p.time_us},
                        {"fit_time_us", c.fit.time_us(p.bytes)},
                        {"busbw_gbps", busbw_gbps(c, p.bytes, p.time_us)},
                        {"fit_busbw_gbps", busbw_gbps(c, p.bytes, c.fit.time_us(p.bytes))}});
    out["curves"].push_back({{"op", c.op},
                             {"scope", c.scope},
                             {"dtype", c.dtype},
                             {"nranks", c.nranks},
                             {"groups", c.groups},
                             {"in_place", c.in_place},
                             {"alpha_us", c.fit.alpha_us},
                             {"alpha_rms_rel_error", c.fit.alpha_rms_rel_error},
                             {"alpha_points", c.fit.alpha_points},
                             {"beta_gbps", c.fit.valid() ? json(c.fit.beta_gbps) : json(nullptr)},
                             {"beta_rms_rel_error", c.fit.beta_rms_rel_error},
                             {"beta_points", c.fit.beta_points},
                             {"busbw_factor", busbw_factor_of(c)},
                             {"n_half_bytes", c.fit.n_half_bytes},
                             {"fit_rms_rel_error", c.fit.rms_rel_error},
                             {"fit_max_rel_error", c.fit.max_rel_error},
                             {"points", points}});
  }
  return out;
}

Table steps_table(const std::vector<StepCost>& steps) {
  Table t;
  t.header = {"network",  "line_gbit",   "network_bw_gbps", "step_s",  "compute_s",   "non_gemm_s",    "exposed_s",
              "comm_pct", "exposed_pct", "efficiency_pct", "mfu_pct", "target_gbps", "compute_source"};
  std::vector<std::pair<std::string, const StepCost*>> all;
  for (const auto& s : steps) {
    t.rows.push_back({s.network, s.network_line_gbps > 0 ? cell(gbit_of(s.network_line_gbps), 0) : "measured",
                      cell(s.network_bw_gbps, 2), cell(s.step_us / 1e6, 3), cell(s.compute_us / 1e6, 3),
                      cell(s.non_gemm_us / 1e6, 3), cell(s.exposed_us / 1e6, 3), percent(s.comm_share),
                      percent(s.exposed_share), percent(s.efficiency), percent(s.mfu),
                      s.inter_wire_bytes > 0 ? cell(s.target_gbps, 2) : "-", s.compute_source});
    t.notes.push_back(target_note(s));
    if (s.memory_bytes > s.memory_capacity_bytes) t.notes.push_back(memory_note(s));
    all.emplace_back(s.network, &s);
  }
  add_assumptions(t, all);
  return t;
}

Table step_items_table(const StepCost& s) {
  Table t;
  t.header = {"collective", "group", "where", "ranks", "bytes_per_call", "calls", "algo", "latency_us", "busbw_gbps",
              "per_call_us", "total_s", "window_s", "exposed_s", "basis"};
  for (const auto& i : s.items)
    t.rows.push_back({i.name, i.group, i.where, std::to_string(i.ranks), std::to_string(std::llround(i.bytes_per_call)),
                      cell(i.calls, 0), i.protocol.empty() ? i.algorithm : i.algorithm + "/" + i.protocol,
                      cell(i.latency_us, 1), cell(i.busbw_gbps, 1), cell(i.time_per_call_us, 1),
                      cell(i.total_us / 1e6, 3), cell(i.window_us / 1e6, 3), cell(i.exposed_us / 1e6, 3),
                      std::string(name(i.basis))});
  const auto& p = s.parallel;
  t.notes.push_back(fmt::format("{} nodes x {} {} (node {}, network {}): dp {} x tp {} x pp {}, {} micro-batches",
                                p.nodes, p.gpus_per_node, s.gpu, s.node, s.network, p.dp, p.tp, p.pp, p.micro_batches));
  t.notes.push_back(
      fmt::format("step {:.3f} s = compute {:.3f} + non-GEMM work {:.3f} (optimizer {:.3f}) + stage "
                  "imbalance {:.3f} + bubble {:.3f} + exposed communication {:.3f}; communication "
                  "{:.1f}% of the step without overlap, {:.1f}% exposed; effective efficiency {:.1f}%, "
                  "MFU {:.1f}%",
                  s.step_us / 1e6, s.compute_us / 1e6, s.non_gemm_us / 1e6, s.optimizer_us / 1e6, s.imbalance_us / 1e6,
                  s.bubble_us / 1e6, s.exposed_us / 1e6, 100 * s.comm_share, 100 * s.exposed_share, 100 * s.efficiency,
                  100 * s.mfu));
  for (const auto& i : s.items) t.notes.push_back(fmt::format("{}: {}", i.name, i.formula));
  t.notes.push_back(target_note(s));
  if (s.memory_bytes > s.memory_capacity_bytes) t.notes.push_back(memory_note(s));
  add_assumptions(t, {{s.network, &s}});
  return t;
}

json step_json(const StepCost& s) {
  json items = json::array();
  for (const auto& i : s.items)
    items.push_back({{"name", i.name}, {"group", i.group}, {"op", std::string(fb::name(i.op))},
                     {"where", i.where}, {"ranks", i.ranks}, {"bytes_per_call", i.bytes_per_call},
                     {"calls", i.calls}, {"algorithm", i.algorithm}, {"protocol", i.protocol},
                     {"latency_us", i.latency_us}, {"busbw_gbps", i.busbw_gbps},
                     {"time_per_call_us", i.time_per_call_us}, {"total_us", i.total_us},
                     {"window_us", i.window_us}, {"exposed_us", i.exposed_us},
                     {"inter_wire_bytes", i.inter_wire_bytes}, {"basis", std::string(name(i.basis))},
                     {"formula", i.formula}});
  const auto& p = s.parallel;
  return {{"network", s.network},
          {"node", s.node},
          {"gpu", s.gpu},
          {"nodes", p.nodes},
          {"gpus_per_node", p.gpus_per_node},
          {"dp", p.dp},
          {"tp", p.tp},
          {"pp", p.pp},
          {"micro_batches", p.micro_batches},
          // Link rates in Gbit/s as the text and CSV give them (docs/results-schema.md: `_gbit`).
          {"network_line_gbit", s.network_line_gbps > 0 ? json(gbit_of(s.network_line_gbps)) : json(nullptr)},
          {"network_bw_gbps", s.network_bw_gbps},
          {"tokens_per_step", s.tokens},
          {"model_flops_per_step", s.model_flops},
          {"rate_tflops", s.rate_tflops},
          {"compute_source", s.compute_source},
          {"compute_us", s.compute_us},
          {"non_gemm_us", s.non_gemm_us},
          {"optimizer_us", s.optimizer_us},
          {"non_gemm_bytes", s.non_gemm_bytes},
          {"imbalance_us", s.imbalance_us},
          {"bubble_us", s.bubble_us},
          {"comm_us", s.comm_us},
          {"exposed_us", s.exposed_us},
          {"step_us", s.step_us},
          {"comm_share", s.comm_share},
          {"exposed_share", s.exposed_share},
          {"efficiency", s.efficiency},
          {"mfu", s.mfu},
          {"inter_wire_bytes_per_node", s.inter_wire_bytes},
          {"exposed_target", s.exposed_target},
          {"target_gbps_per_node", number_or_null(s.target_gbps)},
          {"exposed_floor", s.exposed_floor},
          {"memory_bytes", s.memory_bytes},
          {"memory_capacity_bytes", s.memory_capacity_bytes},
          {"assumptions", assumptions_json(s)},
          {"caveats", s.caveats},
          {"items", items}};
}

json steps_json(const std::string& workload, const std::vector<StepCost>& steps) {
  json out = {{"type", "step"}, {"workload", workload}, {"networks", json::array()}};
  for (const auto& s : steps) out["networks"].push_back(step_json(s));
  return out;
}

void add_share_fit(Table& t, json& j, const ShareFit& fit) {
  json& out = j["busbw_share_fit"] = {{"group", fit.group}, {"measured_step_s", fit.measured_step_s}};
  if (!fit.share) {
    out["busbw_share"] = nullptr;
    out["why"] = fit.share.why();
    t.notes.push_back(fmt::format("measured step {:.4g} s: no {} busbw share gives it: {}", fit.measured_step_s,
                                  fit.group, fit.share.why()));
    return;
  }
  out["busbw_share"] = *fit.share;
  t.notes.push_back(fmt::format("measured step {:.4g} s: the framework's {} collectives reach {:.3g} of NCCL's bus "
                                "bandwidth (state busbw_share: {{{}: {:.3g}}} in the workload to price it)",
                                fit.measured_step_s, fit.group, *fit.share, fit.group, *fit.share));
}

Table scale_table(const Scaling& scaling) {
  Table t;
  t.header = {"network",  "nodes",       "gpus",           "dp",      "micro_batches", "step_s",      "non_gemm_s",
              "comm_pct", "exposed_pct", "efficiency_pct", "mfu_pct", "tokens_per_s",  "target_gbps", "compute_source"};
  std::vector<std::pair<std::string, const StepCost*>> first_points;
  for (const auto& [network, points] : scaling) {
    bool first = true;
    for (const auto& pt : points) {
      if (!pt.why.empty()) {
        t.notes.push_back(fmt::format("{} at {} nodes: {}", network, pt.nodes, pt.why));
        continue;
      }
      const auto& s = pt.step;
      if (first) first_points.emplace_back(network, &s);
      first = false;
      t.rows.push_back({network, std::to_string(pt.nodes), std::to_string(s.parallel.gpus),
                        std::to_string(s.parallel.dp), std::to_string(s.parallel.micro_batches),
                        cell(s.step_us / 1e6, 3), cell(s.non_gemm_us / 1e6, 3), percent(s.comm_share),
                        percent(s.exposed_share), percent(s.efficiency), percent(s.mfu),
                        cell(s.tokens / (s.step_us / 1e6), 0), s.inter_wire_bytes > 0 ? cell(s.target_gbps, 2) : "-",
                        s.compute_source});
    }
  }
  if (!first_points.empty())
    t.notes.push_back(fmt::format("target_gbps: achievable network bandwidth per node for an exposed share of at most "
                                  "{:.3g}% (inf: none suffices)",
                                  100 * first_points.front().second->exposed_target));
  add_assumptions(t, first_points);
  return t;
}

json scale_json(const std::string& workload, const Scaling& scaling) {
  json out = {{"type", "scaling"}, {"workload", workload}, {"networks", json::array()}};
  for (const auto& [network, points] : scaling) {
    json list = json::array();
    for (const auto& pt : points) {
      if (!pt.why.empty()) {
        list.push_back({{"nodes", pt.nodes}, {"why", pt.why}});
        continue;
      }
      json p = step_json(pt.step);
      p.erase("items");
      list.push_back(p);
    }
    out["networks"].push_back({{"network", network}, {"points", list}});
  }
  return out;
}

Table memory_table(const std::vector<MemoryFit>& fits, int workload_zero) {
  Table t;
  t.header = {"zero", "states_gib", "gathered_gib", "activations_gib", "total_gib", "capacity_gib", "fits",
              "smallest_dp", "smallest_tp"};
  for (const auto& m : fits)
    t.rows.push_back({fmt::format("{}{}", m.zero, m.zero == workload_zero ? " (workload)" : ""),
                      cell(m.states_bytes / kBytesPerGiB, 2), cell(m.gathered_bytes / kBytesPerGiB, 2),
                      cell(m.activation_bytes / kBytesPerGiB, 2), cell(m.total_bytes / kBytesPerGiB, 2),
                      cell(m.capacity_bytes / kBytesPerGiB, 0), m.fits ? "yes" : "no",
                      m.smallest_dp ? std::to_string(m.smallest_dp) : "none",
                      m.smallest_tp ? std::to_string(m.smallest_tp) : "none"});
  t.notes.push_back("states: 16 bytes per parameter (mixed-precision Adam; 18 with an fp32 main_grad) sharded by ZeRO "
                    "stage; gathered: ZeRO-3's live gathered parameters (stage3_max_live_parameters); activations "
                    "per Korthikanti et al. 2022; not counted: temporary buffers, fragmentation, the CUDA context");
  return t;
}

json memory_json(const std::string& workload, const std::string& gpu, const std::vector<MemoryFit>& fits) {
  json out = {{"type", "memory"}, {"workload", workload}, {"gpu", gpu}, {"stages", json::array()}};
  for (const auto& m : fits)
    out["stages"].push_back({{"zero", m.zero}, {"states_bytes", m.states_bytes}, {"gathered_bytes", m.gathered_bytes},
                             {"activation_bytes", m.activation_bytes}, {"total_bytes", m.total_bytes},
                             {"capacity_bytes", m.capacity_bytes}, {"fits", m.fits},
                             {"smallest_dp", m.smallest_dp}, {"smallest_tp", m.smallest_tp}});
  return out;
}

}  // namespace fb::model
