// Tables and JSON for quotes, run comparisons and the preset list.
#include <nlohmann/json.hpp>
#include <fmt/format.h>

#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/units.hpp"
#include "fabricbench/model/report.hpp"

namespace fb::model {
namespace {

std::string billing_label(const Quote& q) {
  switch (q.billing) {
    case Billing::monthly: return fmt::format("monthly -{:.0f}%", 100 * q.monthly_discount);
    case Billing::spot: return fmt::format("spot +{:.0f}%", 100 * q.preemption_overhead);
    case Billing::hourly: return "hourly";
  }
  return "hourly";
}

// Wall hours of the job split into what the GPUs did.
json hours_split(const QuoteResult& r) {
  const double run_hours = r.hours / (r.quote.billing == Billing::spot ? 1.0 + r.quote.preemption_overhead : 1.0);
  const double per_us = run_hours / r.step.step_us;
  return {{"compute", r.step.compute_us * per_us},
          {"non_gemm", r.step.non_gemm_us * per_us},
          {"bubble", r.step.bubble_us * per_us},
          {"exposed_comm", r.step.exposed_us * per_us},
          {"preemption", r.hours - run_hours}};
}

json measurement_json(const Measurement& m) {
  return {{"time_median_us", m.time.median_us}, {"time_min_us", m.time.min_us}, {"time_p99_us", m.time.p99_us},
          {"busbw_gbps", m.busbw_gbps}};
}

}  // namespace

Table quotes_table(const std::vector<QuoteResult>& ranked, const std::string& currency) {
  Table t;
  t.header = {"rank", "quote", "gpus", "network", "billing", "price_gpu_h", "step_s", "exposed_pct",
              "efficiency_pct", "target_gbps", "fits", "hours", "cost", "per_effective_gpu_h"};
  std::vector<std::pair<std::string, const StepCost*>> steps;
  for (const auto& r : ranked) {
    const auto& q = r.quote;
    t.rows.push_back({std::to_string(r.rank), q.name, fmt::format("{}x{} {}", q.nodes, q.gpus_per_node, q.gpu),
                      r.step.network, billing_label(q), cell(q.price_per_gpu_hour, 2), cell(r.step.step_us / 1e6, 3),
                      percent(r.step.exposed_share), percent(r.step.efficiency),
                      r.step.inter_wire_bytes > 0 ? cell(r.step.target_gbps, 2) : "-", r.memory.fits ? "yes" : "no",
                      cell(r.hours, 0), cell(r.cost, 0), cell(r.cost_per_effective_gpu_hour, 2)});
    steps.emplace_back(q.name, &r.step);
  }
  t.notes.push_back(fmt::format("costs in {}; {}", currency, verdict(ranked, currency)));
  if (!ranked.empty())
    t.notes.push_back(fmt::format("network: NICs per node x NIC type; target_gbps: achievable network bandwidth per "
                                  "node for an exposed share of at most {:.3g}% (inf: none suffices)",
                                  100 * ranked.front().step.exposed_target));
  add_assumptions(t, steps);
  return t;
}

json quotes_json(const std::string& workload, const std::vector<QuoteResult>& ranked, const std::string& currency) {
  json out = {{"type", "quotes"}, {"workload", workload}, {"currency", currency},
              {"verdict", verdict(ranked, currency)}, {"quotes", json::array()}};
  for (const auto& r : ranked) {
    const auto& q = r.quote;
    out["quotes"].push_back({{"rank", r.rank}, {"name", q.name}, {"gpu", q.gpu}, {"nodes", q.nodes},
                             {"gpus_per_node", q.gpus_per_node}, {"network", r.step.network},
                             {"billing", std::string(name(q.billing))}, {"monthly_discount", q.monthly_discount},
                             {"preemption_overhead", q.preemption_overhead},
                             {"price_per_gpu_hour", q.price_per_gpu_hour}, {"fits_memory", r.memory.fits},
                             {"memory_bytes", r.memory.total_bytes}, {"hours", r.hours},
                             {"hours_split", hours_split(r)}, {"cost", r.cost},
                             {"cost_per_effective_gpu_hour", r.cost_per_effective_gpu_hour}, {"step", step_json(r.step)}});
  }
  return out;
}

Table compare_table(const Comparison& c, const std::string& a_path, const std::string& b_path) {
  Table t;
  t.header = {"op", "scope", "ranks", "bytes", "in_place", "a_median_us", "b_median_us", "b_over_a", "a_busbw_gbps",
              "b_busbw_gbps", "a_min_p99_us", "b_min_p99_us", "verdict"};
  const auto range = [](const Measurement& m) { return fmt::format("{:.1f}-{:.1f}", m.time.min_us, m.time.p99_us); };
  for (const auto& r : c.rows) {
    const bool has_a = r.diff != Difference::only_b, has_b = r.diff != Difference::only_a;
    t.rows.push_back({r.op, r.scope, std::to_string(r.nranks), std::to_string(r.bytes), r.in_place ? "in" : "out",
                      has_a ? cell(r.a.time.median_us, 2) : "-", has_b ? cell(r.b.time.median_us, 2) : "-",
                      has_a && has_b ? cell(r.ratio, 3) : "-", has_a ? cell(r.a.busbw_gbps, 3) : "-",
                      has_b ? cell(r.b.busbw_gbps, 3) : "-", has_a ? range(r.a) : "-", has_b ? range(r.b) : "-",
                      std::string(name(r.diff))});
  }
  t.notes.push_back(fmt::format("a = {}, b = {}; b_over_a > 1: b is slower", a_path, b_path));
  t.notes.push_back(fmt::format("{} rows slower and {} faster beyond their run-to-run spread (the [min, p99] ranges "
                                "do not overlap); {} only in a, {} only in b{}",
                                c.slower, c.faster, c.only_a, c.only_b,
                                c.no_spread ? fmt::format("; {} rows with one timed iteration (imported nccl-tests rows) "
                                                          "have no spread to judge a difference by",
                                                          c.no_spread)
                                            : ""));
  for (const auto& u : c.unlike) t.notes.push_back("unlike: " + u);
  return t;
}

json compare_json(const Comparison& c, const std::string& a_path, const std::string& b_path) {
  json out = {{"type", "compare"},  {"a", a_path},        {"b", b_path},
              {"slower", c.slower}, {"faster", c.faster}, {"only_a", c.only_a},
              {"only_b", c.only_b}, {"unlike", c.unlike}, {"rows", json::array()}};
  for (const auto& r : c.rows) {
    json row = {{"op", r.op}, {"scope", r.scope}, {"dtype", r.dtype}, {"nranks", r.nranks}, {"groups", r.groups},
                {"bytes", r.bytes}, {"in_place", r.in_place}, {"verdict", std::string(name(r.diff))}};
    if (r.diff != Difference::only_b) row["a"] = measurement_json(r.a);
    if (r.diff != Difference::only_a) row["b"] = measurement_json(r.b);
    if (r.diff != Difference::only_a && r.diff != Difference::only_b) row["b_over_a"] = r.ratio;
    out["rows"].push_back(row);
  }
  return out;
}

Table presets_table(const Presets& p) {
  Table t;
  t.header = {"kind", "name", "figures"};
  for (const auto& n : p.networks)
    t.rows.push_back({"network", n.name,
                      fmt::format("{}/NIC ({:.4g} GB/s) x {:.0f}%, {}, +{:.3g} us per step, usually {}x{}",
                                  format_line_rate(n.line_gbps), n.line_gbps, 100 * n.achievable, name(n.transport),
                                  n.extra_hop_us, n.nics_per_node, n.name)});
  for (const auto& n : p.nodes)
    t.rows.push_back(
        {"node", n.name,
         fmt::format("{} GPUs, {:.4g} GB/s/GPU x {:.0f}%, {}{}{}", n.gpus, n.line_gbps, 100 * n.achievable,
                     name(n.fabric), n.nvls_gbps > 0 ? fmt::format(", NVLS {:.4g} GB/s", n.nvls_gbps) : "",
                     n.domain_gpus > n.gpus ? fmt::format(", NVLink domain of {} GPUs", n.domain_gpus) : "")});
  for (const auto& g : p.gpus)
    t.rows.push_back(
        {"gpu", g.name,
         fmt::format("{}, {:.0f} GiB{}, bf16 {:.0f} / fp16 {:.0f}{} TFLOP/s, {}, node {}", name(g.arch), g.memory_gib,
                     g.memory_tbps > 0 ? fmt::format(" at {:.4g} TB/s", g.memory_tbps) : "", g.bf16_tflops,
                     g.fp16_tflops, g.fp8_tflops > 0 ? fmt::format(" / fp8 {:.0f}", g.fp8_tflops) : "", g.interconnect,
                     g.node)});
  for (const auto& n : p.networks) t.notes.push_back(n.name + ": " + n.source);
  for (const auto& n : p.nodes) t.notes.push_back(n.name + ": " + n.source);
  for (const auto& g : p.gpus) t.notes.push_back(g.name + ": " + g.source);
  for (const auto& g : p.gpus)
    t.notes.push_back(g.gemm_curve.empty()
                          ? fmt::format("{}: no GEMM curve (gemm_curve: preset is refused; quotes scale a record by "
                                        "peak)",
                                        g.name)
                          : fmt::format("{}: GEMM curve, {} bf16 points from {} to {}: {}", g.name,
                                        g.gemm_curve.bf16.size(), g.gemm_curve.bf16.front().first,
                                        g.gemm_curve.bf16.back().first, g.gemm_curve.source));
  for (const auto& n : p.nodes)
    if (!n.caveat.empty()) t.notes.push_back(fmt::format("caveat: {}: {}", n.name, n.caveat));
  for (const auto& g : p.gpus)
    if (const std::string_view why = unmeasured_reason(g.arch); !why.empty())
      t.notes.push_back(fmt::format("caveat: {} is {}", g.name, why));
  for (const auto& c : p.changes) t.notes.push_back("presets: " + c);
  return t;
}

namespace {

// A GPU's attention curve in `model presets --format json`; null where it has none.
json attention_json(const AttentionPresetCurve& c) {
  if (c.empty()) return nullptr;
  return {
      {"head_dim", c.head_dim}, {"forward_causal", c.forward_causal}, {"backward", c.backward}, {"source", c.source}};
}

}  // namespace

json presets_json(const Presets& p) {
  json out = {{"type", "presets"},
              {"networks", json::array()},
              {"nodes", json::array()},
              {"gpus", json::array()},
              {"changes", p.changes}};
  for (const auto& n : p.networks)
    out["networks"].push_back({{"name", n.name}, {"description", n.description}, {"line_gbps", n.line_gbps},
                               {"achievable", n.achievable}, {"transport", std::string(name(n.transport))},
                               {"extra_hop_us", n.extra_hop_us}, {"nics_per_node", n.nics_per_node},
                               {"source", n.source}});
  for (const auto& n : p.nodes)
    out["nodes"].push_back({{"name", n.name},
                            {"description", n.description},
                            {"gpus", n.gpus},
                            {"domain_gpus", n.domain_gpus},
                            {"line_gbps", n.line_gbps},
                            {"achievable", n.achievable},
                            {"fabric", std::string(name(n.fabric))},
                            {"nvls_gbps", n.nvls_gbps},
                            {"extra_hop_us", n.extra_hop_us},
                            {"source", n.source},
                            {"caveat", n.caveat}});
  for (const auto& g : p.gpus)
    out["gpus"].push_back({{"name", g.name},
                           {"description", g.description},
                           {"arch", std::string(name(g.arch))},
                           {"memory_gib", g.memory_gib},
                           {"bf16_tflops", g.bf16_tflops},
                           {"fp16_tflops", g.fp16_tflops},
                           {"fp8_tflops", g.fp8_tflops},
                           {"memory_tbps", g.memory_tbps > 0 ? json(g.memory_tbps) : json(nullptr)},
                           {"interconnect", g.interconnect},
                           {"node", g.node},
                           {"source", g.source},
                           {"gemm_curve", g.gemm_curve.empty() ? json(nullptr)
                                                               : json{{"bf16", g.gemm_curve.bf16},
                                                                      {"fp16", g.gemm_curve.fp16},
                                                                      {"source", g.gemm_curve.source}}},
                           {"attention_curve", attention_json(g.attention_curve)},
                           {"unmeasured_reason", std::string(unmeasured_reason(g.arch))}});
  return out;
}

std::string render(Format format, const Table& table, const json& j) {
  switch (format) {
    case Format::json: return j.dump(2) + "\n";
    case Format::csv: return render_csv(table);
    case Format::text: return render_text(table);
  }
  return render_text(table);
}

}  // namespace fb::model
