// Analytic cases: ring and hierarchical collectives, ZeRO volumes, tensor
// parallel all-reduces, the pipeline bubble and the latency of bucketed calls.
#include "fabricbench/model/formulas.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "model_workloads.hpp"

namespace fb::model {
namespace {

constexpr double kS = 1e9;  // bytes

TEST(Formulas, RingCollectives) {
  // all_reduce on 8 ranks: 2(n-1) alpha + 2(n-1)/n S/B; B = 100 GB/s = 1e5 bytes/us.
  EXPECT_DOUBLE_EQ(ring_time_us(Op::all_reduce, 8, kS, 5.0, 100.0), 14 * 5.0 + 1.75 * kS / 1e5);
  EXPECT_DOUBLE_EQ(ring_time_us(Op::all_gather, 8, kS, 5.0, 100.0), 7 * 5.0 + 0.875 * kS / 1e5);
  EXPECT_DOUBLE_EQ(ring_time_us(Op::reduce_scatter, 4, kS, 2.0, 10.0), 3 * 2.0 + 0.75 * kS / 1e4);
  EXPECT_DOUBLE_EQ(ring_time_us(Op::sendrecv, 2, kS, 3.0, 50.0), 3.0 + kS / 5e4);
  EXPECT_DOUBLE_EQ(ring_time_us(Op::all_reduce, 1, kS, 5.0, 100.0), 0.0);
  EXPECT_EQ(ring_steps(Op::all_reduce, 16), 30);
  EXPECT_DOUBLE_EQ(ring_wire_bytes(Op::all_reduce, 2, kS), kS);
}

TEST(Formulas, HierarchicalAllReduceIsIntraReduceScatterInterAllReduceIntraAllGather) {
  const auto phases = hierarchical_phases(Op::all_reduce, kS, {8, 2, 1});
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[0].level, Level::intra);
  EXPECT_EQ(phases[0].op, Op::reduce_scatter);
  EXPECT_EQ(phases[0].nranks, 8);
  EXPECT_EQ(phases[1].level, Level::inter);
  EXPECT_EQ(phases[1].op, Op::all_reduce);
  EXPECT_EQ(phases[1].nranks, 2);
  EXPECT_DOUBLE_EQ(phases[1].bytes, kS);  // 8 rails of S/8 = the node's S
  EXPECT_EQ(phases[2].op, Op::all_gather);
  // Time with NVLink-like and 10GbE-like links, by hand.
  double t = 0;
  for (const auto& p : phases)
    t += p.level == Level::intra ? ring_time_us(p.op, p.nranks, p.bytes, 3.0, 231.0)
                                 : ring_time_us(p.op, p.nranks, p.bytes, 30.0, 1.0625);
  EXPECT_DOUBLE_EQ(t, 2 * (7 * 3.0 + 0.875 * kS / 231e3) + 2 * 30.0 + kS / 1062.5);
  // Two TP ranks per DP group on the node: their groups share the NICs.
  EXPECT_DOUBLE_EQ(hierarchical_phases(Op::all_reduce, kS, {4, 2, 2})[1].bytes, 2 * kS);
  // Inside one node, or one rank per node: a single ring.
  EXPECT_EQ(hierarchical_phases(Op::all_reduce, kS, {8, 1, 1}).size(), 1u);
  const auto flat = hierarchical_phases(Op::all_gather, kS, {1, 16, 8});
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_EQ(flat[0].level, Level::inter);
  EXPECT_DOUBLE_EQ(flat[0].bytes, 8 * kS);
  const auto ag = hierarchical_phases(Op::all_gather, kS, {8, 4, 1});
  ASSERT_EQ(ag.size(), 2u);
  EXPECT_EQ(ag[0].level, Level::inter);
  EXPECT_EQ(ag[1].level, Level::intra);
}

// Wire bytes per rank of a stage's collectives on d ranks, in units of the
// ring's (d-1)/d Psi: DDP 2, ZeRO-1/2 2, ZeRO-3 3 (per forward-backward).
TEST(Formulas, ZeroVolumes) {
  const int d = 16;
  const double psi = 1e9, unit = (d - 1.0) / d * psi;
  const double expected[] = {2, 2, 2, 3};
  for (int zero = 0; zero <= 3; ++zero) {
    double wire = 0;
    for (const auto& c : dp_collectives(zero)) wire += ring_wire_bytes(c.op, d, psi);
    EXPECT_DOUBLE_EQ(wire / unit, expected[zero]) << "ZeRO-" << zero;
  }
}

TEST(Formulas, ZeroVolumesCrossTheNetworkInTheStep) {
  // 2 nodes x 8, one micro-batch: the node-level phase of each collective
  // sends (n-1)/n = 1/2 of its bytes (all_reduce 2(n-1)/n = 1), so per node:
  // DDP and ZeRO-1/2 once the bf16 parameter bytes, ZeRO-3 1.5 times.
  auto w = test::small_workload();
  const double bytes = w.params * 2;
  const double expected[] = {1.0, 1.0, 1.0, 1.5};
  for (int zero = 0; zero <= 3; ++zero) {
    w.zero = zero;
    const auto s = test::step_on(w, "1x10gbe");
    EXPECT_NEAR(s.inter_wire_bytes, expected[zero] * bytes, 1e-9 * bytes) << "ZeRO-" << zero;
  }
}

TEST(Formulas, TensorParallelAllReducesPerLayerPerMicroBatch) {
  auto w = test::small_workload();
  w.tp = 8;
  w.micro_batch = 2;
  w.global_batch = 8;  // dp 2 x micro-batch 2 x 2 micro-batches
  for (const bool recompute : {false, true}) {
    w.recompute = recompute;
    const auto s = test::step_on(w, "8x200g-hdr-ib");
    ASSERT_EQ(s.items.front().group, "tp");
    const auto& tp = s.items.front();
    EXPECT_EQ(tp.where, "intra");
    EXPECT_DOUBLE_EQ(tp.bytes_per_call, 2.0 * 1024 * 2048 * 2);  // b*s*h bf16
    EXPECT_DOUBLE_EQ(tp.calls, 2 * 16 * (recompute ? 6 : 4));     // m x layers x 4 (6 with recompute)
    EXPECT_DOUBLE_EQ(tp.exposed_us, tp.total_us);                  // exposed unless overlapped
  }
}

TEST(Formulas, PipelineBubble) {
  EXPECT_DOUBLE_EQ(bubble_fraction(4, 1, 8), 3.0 / 8);
  EXPECT_DOUBLE_EQ(bubble_fraction(4, 2, 8), 3.0 / 16);
  EXPECT_DOUBLE_EQ(bubble_fraction(1, 1, 8), 0.0);
  auto w = test::small_workload();
  w.pp = 4;
  w.virtual_stages = 2;
  w.global_batch = 32;  // dp 4 x 8 micro-batches
  const auto s = test::step_on(w, "8x200g-hdr-ib");
  EXPECT_DOUBLE_EQ(s.bubble_us, s.compute_us * 3.0 / 16);
  EXPECT_EQ(s.parallel.micro_batches, 8);
  EXPECT_EQ(s.items.back().group, "pp");
  EXPECT_DOUBLE_EQ(s.items.back().calls, 2 * 8 * 2);
}

TEST(Formulas, EveryBucketedCallPaysTheLatency) {
  auto w = test::small_workload();  // 2^30 bf16 gradients = 2 GiB
  w.bucket_bytes = 32ull << 20;     // 64 calls
  const auto many = test::step_on(w, "1x10gbe");
  w.bucket_bytes = 2ull << 30;  // 1 call
  const auto one = test::step_on(w, "1x10gbe");
  ASSERT_DOUBLE_EQ(many.items[0].calls, 64);
  ASSERT_DOUBLE_EQ(one.items[0].calls, 1);
  // Per call: 2 x 7 hops inside the node (nvlink3-8: 3 us) + 2 hops between
  // the two nodes (10gbe: 30 us); the bandwidth terms add up the same.
  EXPECT_NEAR(many.comm_us - one.comm_us, 63 * (14 * 3.0 + 2 * 30.0), 1e-6 * many.comm_us);
}

TEST(Formulas, ComputeTimeEffectiveEfficiencyAndMfu) {
  auto w = test::small_workload();
  const auto s = test::step_on(w, "8x400g-ndr-ib");
  const double flops = 16.0 * 1024 * (6 * w.params + 12.0 * 16 * 2048 * 1024);
  EXPECT_DOUBLE_EQ(s.model_flops, flops);
  EXPECT_NEAR(s.compute_us, flops / (16 * 150e12) * 1e6, 1e-9 * s.compute_us);
  EXPECT_DOUBLE_EQ(s.step_us, s.compute_us + s.bubble_us + s.exposed_us);
  EXPECT_DOUBLE_EQ(s.efficiency, s.compute_us / s.step_us);
  EXPECT_NEAR(s.mfu, 150.0 / 312 * s.efficiency, 1e-12);
  w.recompute = true;  // 4/3 the hardware FLOPs at the same achieved rate
  EXPECT_NEAR(test::step_on(w, "8x400g-ndr-ib").compute_us, s.compute_us * 4 / 3, 1e-6);
}

TEST(Formulas, OverlapWindowsHideOnlyWhatTheyCover) {
  auto w = test::small_workload();
  w.global_batch = 64;  // 4 micro-batches: DDP reduces once, under the last backward
  const auto bare = test::step_on(w, "1x10gbe");
  w.overlap.grad_reduce = 1.0;
  const auto hidden = test::step_on(w, "1x10gbe");
  const auto& item = hidden.items.front();
  EXPECT_DOUBLE_EQ(item.window_us, hidden.compute_us * 2 / 3 / 4);
  // The buckets are issued evenly through the window, the last as it ends:
  // the others hide under the (n-1)/n of the window before it, and the last
  // call is exposed whatever the window.
  const double n = item.calls;
  ASSERT_GT(n, 1);
  const double hidden_us = item.window_us * (n - 1) / n;
  EXPECT_DOUBLE_EQ(item.exposed_us, std::max(item.time_per_call_us, item.total_us - hidden_us));
  EXPECT_NEAR(bare.step_us - hidden.step_us, item.total_us - item.exposed_us, 1e-9 * bare.step_us);
}

TEST(Formulas, TheLastGradientBucketIsAlwaysExposed) {
  auto w = test::small_workload();
  w.overlap.grad_reduce = 1.0;
  w.tflops = 10;  // a long backward pass
  const auto fast = test::step_on(w, "8x400g-ndr-ib");
  const auto& item = fast.items.front();
  // Each call is shorter than the gap between two buckets: every call but
  // the last ends before the next is ready.
  ASSERT_LE(item.time_per_call_us, item.window_us / item.calls);
  EXPECT_DOUBLE_EQ(item.exposed_us, item.time_per_call_us);
}

}  // namespace
}  // namespace fb::model
