// Figures -> verdicts (the rules in diagnose/verdict.hpp).
#include "fabricbench/diagnose/verdict.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <map>

#include "fabricbench/core/enum_cover.hpp"

namespace fb::diagnose {
namespace {

struct VerdictName {
  Verdict verdict;
  std::string_view name;
  std::string_view words;
  bool problem;
};

constexpr std::array kVerdicts{
    VerdictName{Verdict::throttled, "throttled", "throttled", true},
    VerdictName{Verdict::communication_bound, "communication_bound", "communication-bound", true},
    VerdictName{Verdict::input_starved, "input_starved", "starved by input", true},
    VerdictName{Verdict::compute_bound, "compute_bound", "compute-bound", false},
    VerdictName{Verdict::idle, "idle", "idle", false},
    VerdictName{Verdict::undetermined, "undetermined", "undetermined", false},
};
static_assert(enum_cover::covers<Verdict, kVerdicts>([](const VerdictName& v) { return v.verdict; }));

const VerdictName& entry(Verdict v) { return kVerdicts[static_cast<std::size_t>(v)]; }

std::string pct(double v) { return fmt::format("{:.0f}%", v); }
std::string gbps(double v) { return fmt::format("{:.3g} GB/s", v); }

// The conditions that held, in verdict order, each with its sentence.
class Findings {
 public:
  void add(Verdict v, std::string why) {
    if (!held_.count(v)) order_.push_back(v);
    held_[v].push_back(std::move(why));
  }
  bool empty() const { return order_.empty(); }
  Diagnosis result() const {
    Diagnosis d;
    std::vector<Verdict> sorted = order_;
    std::sort(sorted.begin(), sorted.end());
    d.verdict = sorted.front();
    for (const Verdict v : sorted) {
      if (v != d.verdict) d.also.push_back(v);
      for (const auto& w : held_.at(v)) d.why.push_back(w);
    }
    return d;
  }

 private:
  std::vector<Verdict> order_;
  std::map<Verdict, std::vector<std::string>> held_;
};

// Iteration times that vary: a sign of steps waiting on something.
bool iterations_vary(const NodeFigures& n, const Thresholds& t, std::string& why) {
  if (!n.iter_spread_pct || *n.iter_spread_pct <= t.iter_spread_pct) return false;
  why = fmt::format("iteration times vary by {} of their median {:.4g} {} (p90 - p10 over {} iterations, > {:g}%)",
                    pct(*n.iter_spread_pct), *n.iter_median, n.iter_unit, n.iterations, t.iter_spread_pct);
  return true;
}

std::string steadiness(const NodeFigures& n, const Thresholds& t) {
  if (n.iter_spread_pct)
    return fmt::format("iterations steady (spread {} <= {:g}% over {})", pct(*n.iter_spread_pct), t.iter_spread_pct,
                       n.iterations);
  return fmt::format("iteration times unknown ({})", n.iter_spread_pct.why());
}

// A link at or above comm_busy_pct of its peak, in words.
std::vector<std::string> busy_links(const GpuFigures* g, const NodeFigures& n, const Thresholds& t) {
  std::vector<std::string> out;
  if (g && g->nvlink_busy_pct && *g->nvlink_busy_pct >= t.comm_busy_pct)
    out.push_back(fmt::format("NVLink moves {} tx / {} rx, {} of its peak (>= {:g}%)", gbps(*g->nvlink_tx_gbps),
                              gbps(*g->nvlink_rx_gbps), pct(*g->nvlink_busy_pct), t.comm_busy_pct));
  if (n.nic_busy_pct && *n.nic_busy_pct >= t.comm_busy_pct)
    out.push_back(fmt::format("NIC {} moves {} tx / {} rx, {} of its peak (>= {:g}%)", n.nic, gbps(*n.nic_tx_gbps),
                              gbps(*n.nic_rx_gbps), pct(*n.nic_busy_pct), t.comm_busy_pct));
  return out;
}

}  // namespace

std::string_view name(Verdict v) { return entry(v).name; }
std::string_view words(Verdict v) { return entry(v).words; }
bool is_problem(Verdict v) { return entry(v).problem; }
std::optional<Verdict> parse_verdict(std::string_view text) {
  for (const auto& v : kVerdicts)
    if (v.name == text) return v.verdict;
  return std::nullopt;
}
std::string_view words_of(std::string_view text) {
  const auto v = parse_verdict(text);
  return v ? words(*v) : text;
}

std::string Diagnosis::reason() const { return fmt::format("{}", fmt::join(why, "; ")); }

Diagnosis diagnose_gpu(const GpuFigures& g, const NodeFigures& n, const Thresholds& t) {
  if (g.samples < t.min_samples || !g.sm_util_pct) {
    Diagnosis d;
    d.why.push_back(g.samples < t.min_samples
                        ? fmt::format("{} samples, fewer than {}: not judged (a longer --seconds)", g.samples, t.min_samples)
                        : fmt::format("SM utilization unknown: {}", g.sm_util_pct.why()));
    return d;
  }
  const double sm = *g.sm_util_pct;
  Findings f;
  if (g.throttled_pct && *g.throttled_pct >= t.throttled_pct)
    f.add(Verdict::throttled,
          fmt::format("clocks held back in {} of the samples (>= {:g}%): {}; SM clock {} of its maximum, power {}, up to "
                      "{}",
                      pct(*g.throttled_pct), t.throttled_pct, fmt::join(g.throttle_reasons, ", "),
                      g.sm_clock_pct ? pct(*g.sm_clock_pct) : "unknown",
                      g.power_pct ? pct(*g.power_pct) + " of its limit" : "unknown",
                      g.temperature_max_c ? fmt::format("{:.0f} C", *g.temperature_max_c) : "? C"));
  if (sm < t.busy_sm_pct)
    for (const auto& link : busy_links(&g, n, t))
      f.add(Verdict::communication_bound, fmt::format("{} while SMs are busy {} (< {:g}%)", link, pct(sm), t.busy_sm_pct));
  if (sm < t.low_sm_pct && g.memory_used_pct && *g.memory_used_pct >= t.memory_full_pct)
    f.add(Verdict::input_starved, fmt::format("SMs busy {} (< {:g}%) while memory is {} full (>= {:g}%)", pct(sm),
                                              t.low_sm_pct, pct(*g.memory_used_pct), t.memory_full_pct));
  if (sm < t.low_sm_pct && g.mem_util_pct && *g.mem_util_pct >= t.busy_memory_pct)
    f.add(Verdict::input_starved, fmt::format("memory bandwidth busy {} (>= {:g}%) while SMs are busy {} (< {:g}%)",
                                              pct(*g.mem_util_pct), t.busy_memory_pct, pct(sm), t.low_sm_pct));
  std::string vary;
  const bool varies = iterations_vary(n, t, vary);
  if (varies) f.add(Verdict::input_starved, vary);
  if (sm >= t.busy_sm_pct && !varies)
    f.add(Verdict::compute_bound, fmt::format("SMs busy {} (>= {:g}%), {}", pct(sm), t.busy_sm_pct, steadiness(n, t)));
  const bool memory_low = !g.memory_used_pct || *g.memory_used_pct < t.memory_full_pct;
  if (f.empty() && sm < t.idle_sm_pct && memory_low)
    f.add(Verdict::idle, fmt::format("no kernels: SMs busy {} (< {:g}%), memory {} full", pct(sm), t.idle_sm_pct,
                                     g.memory_used_pct ? pct(*g.memory_used_pct) : "?"));
  if (!f.empty()) return f.result();
  Diagnosis d;
  d.why.push_back(fmt::format(
      "SMs busy {} ({}), memory {} full, no link at {:g}% of its peak, {}: none of the stated causes holds", pct(sm),
      sm >= t.low_sm_pct ? fmt::format("between {:g}% and {:g}%", t.low_sm_pct, t.busy_sm_pct)
                         : fmt::format("< {:g}%", t.low_sm_pct),
      g.memory_used_pct ? pct(*g.memory_used_pct) : "?", t.comm_busy_pct, steadiness(n, t)));
  return d;
}

Diagnosis diagnose_node(const std::vector<std::pair<int, Diagnosis>>& gpus, const NodeFigures& n,
                        const std::string& gpu_reason, const Thresholds& t) {
  if (gpus.empty()) {
    Findings f;
    for (const auto& link : busy_links(nullptr, n, t)) f.add(Verdict::communication_bound, link);
    std::string vary;
    if (iterations_vary(n, t, vary)) f.add(Verdict::input_starved, vary);
    Diagnosis d = f.empty() ? Diagnosis{} : f.result();
    if (f.empty()) d.why.push_back(steadiness(n, t));
    d.why.push_back("GPU figures unknown: " + (gpu_reason.empty() ? std::string("no GPU sampled") : gpu_reason));
    return d;
  }
  std::map<Verdict, std::vector<int>> by_verdict;
  for (const auto& [index, g] : gpus) by_verdict[g.verdict].push_back(index);
  Verdict most = by_verdict.begin()->first;  // map order = verdict order: ties go to the first
  for (const auto& [v, list] : by_verdict)
    if (list.size() > by_verdict[most].size()) most = v;
  Diagnosis d;
  d.verdict = most;
  for (const auto& [v, list] : by_verdict) {
    if (v != most) d.also.push_back(v);
    std::vector<std::string> names;
    for (const auto i : list) names.push_back(std::to_string(i));
    d.why.push_back(fmt::format("{} on GPU {}", words(v), fmt::join(names, ", ")));
  }
  return d;
}

}  // namespace fb::diagnose
