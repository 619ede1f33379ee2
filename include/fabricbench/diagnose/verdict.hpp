// From sample series to a verdict, with the figures and the thresholds that
// decided it. Pure functions: the same series give the same verdict on a
// live node, on a replayed record and in tests.
//
//   throttled            clocks held back (HW slowdown, thermal, power brake,
//                        or the power cap with the SM clock below a fraction
//                        of its maximum) in at least a share of the samples
//   communication_bound  NVLink or the busiest NIC moves at least a share of
//                        its peak while the SMs are not busy
//   input_starved        SMs seldom busy while memory is nearly full, or busy
//                        memory bandwidth with idle SMs, or iteration times
//                        that vary by more than a fraction of their median
//   compute_bound        SMs busy and iterations steady
//   idle                 no kernels and little memory: no job on this GPU
//   undetermined         none of these, or the figures are unknown (why)
// When several hold, the first in this order is the verdict and the others
// are listed as `also`.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/diagnose/samples.hpp"

namespace fb::diagnose {

enum class Verdict { throttled, communication_bound, input_starved, compute_bound, idle, undetermined };
std::string_view name(Verdict v);   // "input_starved"
std::string_view words(Verdict v);  // "starved by input"
std::optional<Verdict> parse_verdict(std::string_view name);
// The words of a verdict's name ("input_starved" -> "starved by input"); the name itself when unknown.
std::string_view words_of(std::string_view name);
// Verdicts that say the job is held back (exit code 1).
bool is_problem(Verdict v);

// Every threshold, stated in the record's options and on the report.
struct Thresholds {
  double busy_sm_pct = 85;        // SMs busy: compute-bound at or above
  double low_sm_pct = 50;         // SMs seldom busy: below
  double idle_sm_pct = 5;         // no kernels: below
  double memory_full_pct = 90;    // memory nearly full: at or above, of the card's memory
  double busy_memory_pct = 60;    // memory bandwidth busy: controller utilization at or above
  double iter_spread_pct = 20;    // iteration times vary: (p90 - p10) / median above
  double comm_busy_pct = 50;      // a link busy: at or above this share of its peak
  double throttled_pct = 25;      // throttled: at least this share of the samples
  double clock_low_pct = 90;      // under the power cap, a sample counts when the SM clock is below this % of max
  std::size_t min_iterations = 5;  // fewer iteration times: their spread is not judged
  std::size_t min_samples = 3;     // fewer GPU samples: the GPU is not judged
};
nlohmann::ordered_json to_json(const Thresholds& t);
std::string describe(const Thresholds& t);

// Per GPU, over the window.
struct GpuFigures {
  std::size_t samples = 0;
  Fact<double> sm_util_pct;      // mean
  Fact<double> mem_util_pct;     // mean
  Fact<double> memory_used_pct;  // largest, of the card's memory
  Fact<double> pcie_tx_gbps, pcie_rx_gbps;  // mean
  Fact<double> nvlink_tx_gbps, nvlink_rx_gbps;  // from the counters' first and last readings
  Fact<double> nvlink_busy_pct;  // the busier direction, of the peak
  Fact<double> sm_clock_pct;     // mean, of the maximum SM clock
  Fact<double> throttled_pct;    // samples whose clocks were held back
  std::vector<std::string> throttle_reasons;  // the reasons seen in those samples
  Fact<double> power_pct;        // mean draw, of the enforced limit
  Fact<double> power_w;          // mean
  Fact<double> temperature_max_c;
};
GpuFigures gpu_figures(const GpuSeries& series, const Thresholds& t);

// Per node: its NICs, the job's process and its iteration times.
struct NodeFigures {
  std::string nic;  // the busiest NIC ("" when none)
  Fact<double> nic_tx_gbps, nic_rx_gbps;
  Fact<double> nic_busy_pct;  // its busier direction, of its peak
  Fact<double> process_cpu_cores;  // mean CPU cores the job's processes kept busy
  Fact<bool> process_alive;        // at the end of the window
  std::size_t iterations = 0;
  std::string iter_unit;  // "s" or "s/sample"
  Fact<double> iter_median;
  Fact<double> iter_spread_pct;  // (p90 - p10) / median
};
NodeFigures node_figures(const NodeSamples& node, const Thresholds& t);

struct Diagnosis {
  Verdict verdict = Verdict::undetermined;
  std::vector<Verdict> also;
  std::vector<std::string> why;  // the figures against the thresholds, one sentence per condition that held
  std::string reason() const;    // the sentences joined
};

Diagnosis diagnose_gpu(const GpuFigures& gpu, const NodeFigures& node, const Thresholds& t);
// The node: the verdict most of its GPUs have (ties: the first in the
// order above), naming the GPUs of each; without GPU figures, the NICs and
// the iteration times alone, and why the GPUs are unknown.
// `gpus`: (NVML index, its diagnosis).
Diagnosis diagnose_node(const std::vector<std::pair<int, Diagnosis>>& gpus, const NodeFigures& node,
                        const std::string& gpu_reason, const Thresholds& t);

}  // namespace fb::diagnose
