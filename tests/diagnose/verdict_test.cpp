// Verdicts on synthetic sample series: each cause alone, the figures and
// thresholds named in the reason, the order when several hold, and what is
// left when NVML is absent.
#include "fabricbench/diagnose/verdict.hpp"

#include <gtest/gtest.h>

#include "fabricbench/diagnose/report.hpp"
#include "series.hpp"

namespace fb::diagnose {
namespace {

using test::Activity;
using test::h100_series;
namespace reason = topo::clock_reason;

const Thresholds kT;

Diagnosis gpu_verdict(const Activity& a, const std::optional<IterSeries>& iters = std::nullopt,
                      std::vector<NicSeries> nics = {}) {
  NodeSamples node = test::node_of({h100_series(a)});
  node.iterations = iters;
  node.nics = std::move(nics);
  return diagnose_gpu(gpu_figures(node.gpus[0], kT), node_figures(node, kT), kT);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Activity busy() {
  Activity a;
  a.sm_util_pct = 98;
  a.mem_util_pct = 40;
  a.memory_used_gib = 70;
  a.power_w = 650;
  a.reasons = 0;
  a.temperature_c = 70;
  return a;
}

TEST(Verdict, BusySmsAndSteadyIterationsAreComputeBound) {
  const auto d = gpu_verdict(busy(), test::iterations(1.2, 0.02));
  EXPECT_EQ(d.verdict, Verdict::compute_bound) << d.reason();
  EXPECT_TRUE(d.also.empty());
  EXPECT_TRUE(has(d.reason(), "SMs busy 98% (>= 85%)")) << d.reason();
  EXPECT_TRUE(has(d.reason(), "iterations steady (spread 4% <= 20% over 40)")) << d.reason();
}

TEST(Verdict, LowUtilisationWithFullMemoryIsStarvedByInput) {
  Activity a = busy();
  a.sm_util_pct = 30;
  a.memory_used_gib = 78;  // 97.5% of 80
  const auto d = gpu_verdict(a);
  EXPECT_EQ(d.verdict, Verdict::input_starved) << d.reason();
  EXPECT_TRUE(has(d.reason(), "SMs busy 30% (< 50%) while memory is 98% full (>= 90%)")) << d.reason();
}

TEST(Verdict, BusyMemoryBandwidthWithIdleSmsIsStarvedByInput) {
  Activity a = busy();
  a.sm_util_pct = 20;
  a.memory_used_gib = 30;
  a.mem_util_pct = 75;
  const auto d = gpu_verdict(a);
  EXPECT_EQ(d.verdict, Verdict::input_starved) << d.reason();
  EXPECT_TRUE(has(d.reason(), "memory bandwidth busy 75% (>= 60%)")) << d.reason();
}

TEST(Verdict, IterationTimesThatVaryAreStarvedEvenWithBusySms) {
  const auto d = gpu_verdict(busy(), test::iterations(1.0, 0.25));
  EXPECT_EQ(d.verdict, Verdict::input_starved) << d.reason();
  EXPECT_TRUE(has(d.reason(), "iteration times vary by 50% of their median")) << d.reason();
  EXPECT_TRUE(has(d.reason(), "> 20%")) << d.reason();
}

TEST(Verdict, TooFewIterationsAreNotJudged) {
  const auto d = gpu_verdict(busy(), test::iterations(1.0, 0.4, 3));
  EXPECT_EQ(d.verdict, Verdict::compute_bound) << d.reason();
  EXPECT_TRUE(has(d.reason(), "fewer than 5: too few to judge their spread")) << d.reason();
}

TEST(Verdict, BusyNvLinkWhileSmsWaitIsCommunicationBound) {
  Activity a = busy();
  a.sm_util_pct = 55;
  a.nvlink_gbps = 300;  // 67% of 450
  const auto d = gpu_verdict(a);
  EXPECT_EQ(d.verdict, Verdict::communication_bound) << d.reason();
  EXPECT_TRUE(has(d.reason(), "NVLink moves 300 GB/s tx / 300 GB/s rx, 67% of its peak (>= 50%)")) << d.reason();
  EXPECT_TRUE(has(d.reason(), "SMs are busy 55% (< 85%)")) << d.reason();
}

TEST(Verdict, BusyNvLinkUnderBusySmsIsOverlapNotABottleneck) {
  Activity a = busy();
  a.nvlink_gbps = 300;
  EXPECT_EQ(gpu_verdict(a).verdict, Verdict::compute_bound);
}

NicSeries busy_nic(double gbps, double peak_gbps) {
  NicSeries n;
  n.name = "mlx5_0:1";
  n.kind = "IB";
  n.peak_gbps = peak_gbps;
  for (int i = 0; i < 5; ++i) n.samples.push_back({1.0 * i, gbps * 1e9 * i, 0.5 * gbps * 1e9 * i});
  return n;
}

TEST(Verdict, BusyNicWhileSmsWaitIsCommunicationBound) {
  Activity a = busy();
  a.sm_util_pct = 40;
  const auto d = gpu_verdict(a, std::nullopt, {busy_nic(40, 50)});
  EXPECT_EQ(d.verdict, Verdict::communication_bound) << d.reason();
  EXPECT_TRUE(has(d.reason(), "NIC mlx5_0:1 moves 40 GB/s tx / 20 GB/s rx, 80% of its peak")) << d.reason();
}

TEST(Verdict, ThermalSlowdownIsThrottledAndNamed) {
  Activity a = busy();
  a.reasons = reason::hw_thermal | reason::sw_thermal;
  a.sm_clock_mhz = 1200;
  a.temperature_c = 91;
  const auto d = gpu_verdict(a, test::iterations(1.0, 0.01));
  EXPECT_EQ(d.verdict, Verdict::throttled) << d.reason();
  EXPECT_TRUE(has(d.reason(), "clocks held back in 100% of the samples (>= 25%)")) << d.reason();
  EXPECT_TRUE(has(d.reason(), "SW thermal slowdown, HW thermal slowdown")) << d.reason();
  EXPECT_TRUE(has(d.reason(), "SM clock 61% of its maximum")) << d.reason();
  EXPECT_TRUE(has(d.reason(), "up to 91 C")) << d.reason();
  // The SMs were busy too: the job is compute-bound under a throttled clock.
  ASSERT_EQ(d.also.size(), 1u);
  EXPECT_EQ(d.also[0], Verdict::compute_bound);
}

TEST(Verdict, PowerCapAtFullClockIsNotThrottling) {
  Activity a = busy();
  a.reasons = reason::sw_power_cap;  // at its cap, the clock still at its maximum
  EXPECT_EQ(gpu_verdict(a).verdict, Verdict::compute_bound);
  a.sm_clock_mhz = 1500;  // 76% of max: the cap holds it back
  const auto d = gpu_verdict(a);
  EXPECT_EQ(d.verdict, Verdict::throttled) << d.reason();
  EXPECT_TRUE(has(d.reason(), "SW power cap")) << d.reason();
}

TEST(Verdict, ThrottlingInFewSamplesIsBelowTheThreshold) {
  NodeSamples node = test::node_of({h100_series(busy(), 20)});
  for (int i = 0; i < 4; ++i) node.gpus[0].samples[i].clock_reasons = reason::hw_slowdown;  // 20% < 25%
  const auto g = gpu_figures(node.gpus[0], kT);
  EXPECT_DOUBLE_EQ(*g.throttled_pct, 20.0);
  EXPECT_EQ(diagnose_gpu(g, node_figures(node, kT), kT).verdict, Verdict::compute_bound);
  node.gpus[0].samples[4].clock_reasons = reason::hw_slowdown;  // 25%
  EXPECT_EQ(diagnose_gpu(gpu_figures(node.gpus[0], kT), node_figures(node, kT), kT).verdict, Verdict::throttled);
}

TEST(Verdict, NoKernelsAndLittleMemoryIsIdle) {
  const auto d = gpu_verdict(Activity{});
  EXPECT_EQ(d.verdict, Verdict::idle) << d.reason();
}

TEST(Verdict, MiddlingUtilisationWithNoCauseIsUndeterminedAndSaysSo) {
  Activity a = busy();
  a.sm_util_pct = 70;
  a.memory_used_gib = 40;
  const auto d = gpu_verdict(a);
  EXPECT_EQ(d.verdict, Verdict::undetermined) << d.reason();
  EXPECT_TRUE(has(d.reason(), "between 50% and 85%")) << d.reason();
}

TEST(Verdict, SeveralCausesGiveTheFirstInOrderAndListTheOthers) {
  Activity a = busy();
  a.sm_util_pct = 30;
  a.memory_used_gib = 79;
  a.nvlink_gbps = 400;
  a.reasons = reason::hw_slowdown;
  a.sm_clock_mhz = 900;
  const auto d = gpu_verdict(a);
  EXPECT_EQ(d.verdict, Verdict::throttled);
  EXPECT_EQ(d.also, (std::vector<Verdict>{Verdict::communication_bound, Verdict::input_starved}));
}

TEST(Verdict, FiguresUnknownWithoutNvmlGiveTheReason) {
  GpuSeries s = h100_series(busy());
  for (auto& x : s.samples) x.sm_util_pct = Fact<double>::unknown("nvmlDeviceGetUtilizationRates: Unknown Error");
  NodeSamples node = test::node_of({s});
  const auto d = diagnose_gpu(gpu_figures(s, kT), node_figures(node, kT), kT);
  EXPECT_EQ(d.verdict, Verdict::undetermined);
  EXPECT_TRUE(has(d.reason(), "SM utilization unknown: nvmlDeviceGetUtilizationRates: Unknown Error")) << d.reason();
}

TEST(Verdict, TooFewSamplesAreNotJudged) {
  const auto d = gpu_verdict(busy());
  EXPECT_EQ(d.verdict, Verdict::compute_bound);
  NodeSamples node = test::node_of({h100_series(busy(), 2)});
  const auto few = diagnose_gpu(gpu_figures(node.gpus[0], kT), node_figures(node, kT), kT);
  EXPECT_EQ(few.verdict, Verdict::undetermined);
  EXPECT_TRUE(has(few.reason(), "2 samples, fewer than 3")) << few.reason();
}

TEST(Verdict, WithoutNvmlTheNodeIsJudgedOnItsIterationTimes) {
  NodeSamples node;
  node.host = "n1";
  node.gpu_reason = "NVML not loaded: libnvidia-ml.so.1: cannot open shared object file";
  node.iterations = test::iterations(2.0, 0.3);
  auto d = diagnose_node({}, node_figures(node, kT), node.gpu_reason, kT);
  EXPECT_EQ(d.verdict, Verdict::input_starved) << d.reason();
  EXPECT_TRUE(has(d.reason(), "GPU figures unknown: NVML not loaded")) << d.reason();
  node.iterations = test::iterations(2.0, 0.01);
  d = diagnose_node({}, node_figures(node, kT), node.gpu_reason, kT);
  EXPECT_EQ(d.verdict, Verdict::undetermined) << d.reason();
  EXPECT_TRUE(has(d.reason(), "iterations steady (spread 2%")) << d.reason();
}

TEST(Verdict, TheNodeTakesItsGpusMajorityAndNamesTheOddOneOut) {
  Activity hot = busy();
  hot.reasons = reason::hw_thermal;
  hot.sm_clock_mhz = 1000;
  std::vector<GpuSeries> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back(h100_series(i == 3 ? hot : busy(), 20, i));
  const auto lines = diagnose(test::node_of(std::move(gpus)), kT);
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[3].verdict, "throttled");
  EXPECT_EQ(lines[2].verdict, "compute_bound");
  const auto& node = lines.back();
  EXPECT_EQ(node.level, "node");
  EXPECT_EQ(node.verdict, "compute_bound");
  EXPECT_EQ(node.also, std::vector<std::string>{"throttled"});
  EXPECT_TRUE(has(node.reason, "throttled on GPU 3")) << node.reason;
  EXPECT_TRUE(has(node.reason, "compute-bound on GPU 0, 1, 2, 4, 5, 6, 7")) << node.reason;
  EXPECT_TRUE(is_problem(Verdict::throttled));
  EXPECT_FALSE(is_problem(Verdict::compute_bound));
}

TEST(Verdict, NamesReadBack) {
  for (const Verdict v : {Verdict::throttled, Verdict::communication_bound, Verdict::input_starved,
                          Verdict::compute_bound, Verdict::idle, Verdict::undetermined})
    EXPECT_EQ(parse_verdict(name(v)), v);
  EXPECT_EQ(words_of("input_starved"), "starved by input");
  EXPECT_FALSE(parse_verdict("slow"));
}

}  // namespace
}  // namespace fb::diagnose
