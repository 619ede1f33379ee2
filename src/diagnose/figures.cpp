// Sample series -> the figures a verdict is judged on.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "fabricbench/diagnose/verdict.hpp"
#include "fabricbench/topo/nvml.hpp"

namespace fb::diagnose {
namespace {

namespace reason = topo::clock_reason;

// The reasons that hold the clocks back, with the words nvidia-smi uses.
// gpu_idle, applications_clocks, sync_boost and display_clocks describe
// settings or an idle GPU, not a limit the job runs into.
constexpr std::pair<std::uint64_t, const char*> kThrottles[] = {
    {reason::sw_power_cap, "SW power cap"},      {reason::hw_slowdown, "HW slowdown"},
    {reason::sw_thermal, "SW thermal slowdown"}, {reason::hw_thermal, "HW thermal slowdown"},
    {reason::hw_power_brake, "HW power brake"},
};
constexpr std::uint64_t kHardLimits = reason::hw_slowdown | reason::sw_thermal | reason::hw_thermal |
                                      reason::hw_power_brake;

template <typename Sample, typename Get>
Fact<double> mean_of(const std::vector<Sample>& samples, Get get) {
  double sum = 0;
  std::size_t n = 0;
  std::string why = "no samples";
  for (const auto& s : samples) {
    const Fact<double>& f = get(s);
    if (f) {
      sum += *f;
      ++n;
    } else if (n == 0) {
      why = f.why();
    }
  }
  if (n == 0) return Fact<double>::unknown(why);
  return sum / static_cast<double>(n);
}

template <typename Sample, typename Get>
Fact<double> max_of(const std::vector<Sample>& samples, Get get) {
  std::optional<double> best;
  std::string why = "no samples";
  for (const auto& s : samples) {
    const Fact<double>& f = get(s);
    if (f)
      best = best ? std::max(*best, *f) : *f;
    else if (!best)
      why = f.why();
  }
  if (!best) return Fact<double>::unknown(why);
  return *best;
}

// GB/s from a cumulative counter's first and last known readings.
template <typename Sample, typename Get>
Fact<double> rate_of(const std::vector<Sample>& samples, Get get, double bytes_per_unit) {
  const Sample* first = nullptr;
  const Sample* last = nullptr;
  std::string why = "no samples";
  for (const auto& s : samples) {
    const Fact<double>& f = get(s);
    if (!f) {
      if (!first) why = f.why();
      continue;
    }
    if (!first) first = &s;
    last = &s;
  }
  if (!first || first == last || last->t_s <= first->t_s)
    return Fact<double>::unknown(first ? "fewer than two readings of the counter" : why);
  const double delta = *get(*last) - *get(*first);
  if (delta < 0) return Fact<double>::unknown("the counter went back (reset or wrapped) during the window");
  return delta * bytes_per_unit / (last->t_s - first->t_s) / 1e9;
}

Fact<double> percent_of(const Fact<double>& part, const Fact<double>& whole) {
  if (!part) return part;
  if (!whole) return Fact<double>::unknown(whole.why());
  if (*whole <= 0) return Fact<double>::unknown("the reference is 0");
  return 100.0 * *part / *whole;
}

Fact<double> larger(const Fact<double>& a, const Fact<double>& b) {
  if (a && b) return std::max(*a, *b);
  return a ? a : b;
}

// Throttled samples: a hard limit (slowdown, thermal, brake) is on, or the
// power cap is on while the SM clock is below clock_low_pct of its maximum
// (a card at its cap and full clock is not held back).
void throttling(const GpuSeries& series, const Thresholds& t, GpuFigures& g) {
  std::size_t known = 0, held = 0;
  std::uint64_t seen = 0;
  std::string why = "no samples";
  for (const auto& s : series.samples) {
    if (!s.clock_reasons) {
      if (known == 0) why = s.clock_reasons.why();
      continue;
    }
    ++known;
    const std::uint64_t bits = *s.clock_reasons;
    bool low_clock = true;  // without a clock reading, the cap's bit alone
    if (s.sm_clock_mhz && series.info.max_sm_clock_mhz && *series.info.max_sm_clock_mhz > 0)
      low_clock = 100.0 * *s.sm_clock_mhz / *series.info.max_sm_clock_mhz < t.clock_low_pct;
    const bool hard = (bits & kHardLimits) != 0;
    const bool capped = (bits & reason::sw_power_cap) != 0 && low_clock;
    if (!hard && !capped) continue;
    ++held;
    seen |= bits;
  }
  if (known == 0) {
    g.throttled_pct = Fact<double>::unknown(why);
    return;
  }
  g.throttled_pct = 100.0 * static_cast<double>(held) / static_cast<double>(known);
  for (const auto& [bit, words] : kThrottles)
    if (seen & bit) g.throttle_reasons.emplace_back(words);
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

void iteration_figures(const NodeSamples& node, const Thresholds& t, NodeFigures& n) {
  if (!node.iterations) {
    n.iter_median = n.iter_spread_pct = Fact<double>::unknown("no --iter-log");
    return;
  }
  const IterSeries& it = *node.iterations;
  n.iterations = it.values.size();
  n.iter_unit = it.unit;
  if (!it.error.empty() || it.values.empty()) {
    n.iter_median = n.iter_spread_pct = Fact<double>::unknown(!it.error.empty() ? it.error : it.note);
    return;
  }
  n.iter_median = percentile(it.values, 0.5);
  if (it.values.size() < t.min_iterations) {
    n.iter_spread_pct = Fact<double>::unknown(
        fmt::format("{} iteration times, fewer than {}: too few to judge their spread", it.values.size(), t.min_iterations));
    return;
  }
  n.iter_spread_pct = 100.0 * (percentile(it.values, 0.9) - percentile(it.values, 0.1)) / *n.iter_median;
}

void nic_figures(const NodeSamples& node, NodeFigures& n) {
  if (node.nics.empty()) {
    n.nic_tx_gbps = n.nic_rx_gbps = n.nic_busy_pct = Fact<double>::unknown("no NIC that is up");
    return;
  }
  double best = -1;
  for (const auto& nic : node.nics) {
    const auto tx = rate_of(nic.samples, [](const NicSample& s) -> const Fact<double>& { return s.tx_bytes; }, 1.0);
    const auto rx = rate_of(nic.samples, [](const NicSample& s) -> const Fact<double>& { return s.rx_bytes; }, 1.0);
    const auto busy = percent_of(larger(tx, rx), nic.peak_gbps);
    // The busiest by share of its peak; by rate where no peak is known.
    const double key = busy ? *busy : larger(tx, rx).value_or(-1) * 1e-6;
    if (key <= best) continue;
    best = key;
    n.nic = nic.name;
    n.nic_tx_gbps = tx;
    n.nic_rx_gbps = rx;
    n.nic_busy_pct = busy;
  }
  if (n.nic.empty()) {
    n.nic = node.nics.front().name;
    n.nic_tx_gbps = n.nic_rx_gbps = n.nic_busy_pct =
        Fact<double>::unknown(rate_of(node.nics.front().samples,
                                      [](const NicSample& s) -> const Fact<double>& { return s.tx_bytes; }, 1.0)
                                  .why());
  }
}

void process_figures(const NodeSamples& node, NodeFigures& n) {
  if (!node.process) {
    n.process_cpu_cores = Fact<double>::unknown("no --pid");
    n.process_alive = Fact<bool>::unknown("no --pid");
    return;
  }
  const ProcessSeries& p = *node.process;
  if (!p.error.empty() || p.samples.empty()) {
    n.process_cpu_cores = Fact<double>::unknown(!p.error.empty() ? p.error : "no samples");
    n.process_alive = Fact<bool>::unknown(n.process_cpu_cores.why());
    return;
  }
  n.process_alive = p.samples.back().alive;
  // Sum of the increases: a worker that exits takes its CPU time with it,
  // which must not count as negative work.
  double busy = 0, span = 0;
  for (std::size_t i = 1; i < p.samples.size(); ++i) {
    const auto& a = p.samples[i - 1];
    const auto& b = p.samples[i];
    if (!a.cpu_s || !b.cpu_s) continue;
    busy += std::max(0.0, *b.cpu_s - *a.cpu_s);
    span += b.t_s - a.t_s;
  }
  if (span <= 0)
    n.process_cpu_cores = Fact<double>::unknown("fewer than two readings while the process ran");
  else
    n.process_cpu_cores = busy / span;
}

}  // namespace

GpuFigures gpu_figures(const GpuSeries& series, const Thresholds& t) {
  const auto& s = series.samples;
  GpuFigures g;
  g.samples = s.size();
  g.sm_util_pct = mean_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.sm_util_pct; });
  g.mem_util_pct = mean_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.mem_util_pct; });
  g.memory_used_pct = percent_of(max_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.memory_used_bytes; }),
                                 series.info.memory_total_bytes);
  g.pcie_tx_gbps = mean_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.pcie_tx_gbps; });
  g.pcie_rx_gbps = mean_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.pcie_rx_gbps; });
  g.nvlink_tx_gbps = rate_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.nvlink_tx_kib; }, 1024.0);
  g.nvlink_rx_gbps = rate_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.nvlink_rx_kib; }, 1024.0);
  g.nvlink_busy_pct = percent_of(larger(g.nvlink_tx_gbps, g.nvlink_rx_gbps), series.info.nvlink_peak_gbps);
  g.sm_clock_pct = percent_of(mean_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.sm_clock_mhz; }),
                              series.info.max_sm_clock_mhz);
  throttling(series, t, g);
  g.power_w = mean_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.power_w; });
  g.power_pct = percent_of(g.power_w, series.info.power_limit_w);
  g.temperature_max_c = max_of(s, [](const GpuSample& x) -> const Fact<double>& { return x.temperature_c; });
  return g;
}

NodeFigures node_figures(const NodeSamples& node, const Thresholds& t) {
  NodeFigures n;
  nic_figures(node, n);
  process_figures(node, n);
  iteration_figures(node, t, n);
  return n;
}

nlohmann::ordered_json to_json(const Thresholds& t) {
  return {{"busy_sm_pct", t.busy_sm_pct},         {"low_sm_pct", t.low_sm_pct},
          {"idle_sm_pct", t.idle_sm_pct},         {"memory_full_pct", t.memory_full_pct},
          {"busy_memory_pct", t.busy_memory_pct}, {"iter_spread_pct", t.iter_spread_pct},
          {"comm_busy_pct", t.comm_busy_pct},     {"throttled_pct", t.throttled_pct},
          {"clock_low_pct", t.clock_low_pct},     {"min_iterations", t.min_iterations},
          {"min_samples", t.min_samples}};
}

std::string describe(const Thresholds& t) {
  return fmt::format(
      "thresholds: compute-bound when SMs are busy >= {:g}% of the time and iterations steady; starved by input when "
      "SMs are busy < {:g}% while memory is >= {:g}% full or memory bandwidth busy >= {:g}%, or when iteration times "
      "vary by > {:g}% of their median (p90 - p10, at least {} iterations); communication-bound when NVLink or a NIC "
      "moves >= {:g}% of its peak while SMs are busy < {:g}%; throttled when clocks are held back in >= {:g}% of the "
      "samples (HW slowdown, thermal, power brake, or the power cap with the SM clock < {:g}% of its maximum); idle "
      "when SMs are busy < {:g}% with memory < {:g}% full",
      t.busy_sm_pct, t.low_sm_pct, t.memory_full_pct, t.busy_memory_pct, t.iter_spread_pct, t.min_iterations,
      t.comm_busy_pct, t.busy_sm_pct, t.throttled_pct, t.clock_low_pct, t.idle_sm_pct, t.memory_full_pct);
}

}  // namespace fb::diagnose
