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

// NCCL's ring step counts (src/graph/tuning.cc): all of them, and those
// that cross nodes.
TEST(Formulas, RingStepsAsNcclCountsThem) {
  const RingFactors ar = ring_factors(Op::all_reduce, 16, 2);
  EXPECT_EQ(ar.steps, 30);
  EXPECT_EQ(ar.inter_steps, 2);
  EXPECT_DOUBLE_EQ(ar.wire, 2.0 * 15 / 16);
  const RingFactors ag = ring_factors(Op::all_gather, 384, 48);
  EXPECT_EQ(ag.steps, 383);
  EXPECT_EQ(ag.inter_steps, 47);
  EXPECT_DOUBLE_EQ(ag.wire, 383.0 / 384);
  EXPECT_EQ(ring_factors(Op::reduce_scatter, 8, 1).inter_steps, 0);
  EXPECT_EQ(ring_factors(Op::sendrecv, 2, 2).inter_steps, 1);
  EXPECT_EQ(ring_factors(Op::broadcast, 8, 2).steps, 8);
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
  // 2 nodes x 8, one micro-batch: NCCL's flat ring over the 16 ranks leaves
  // each node once per channel, carrying one rank's (n-1)/n = 15/16 of the
  // size per direction (all_reduce twice that). Per node: DDP and ZeRO-1/2
  // 2 x 15/16 of the bf16 parameter bytes, ZeRO-3 3 x 15/16 when no gathered
  // module stays live for the backward pass. (A node-level ring over the 2
  // nodes would give (N-1)/N = 1/2: 1.875 times too little.)
  auto w = test::small_workload();
  w.zero3.max_live = 0;
  const double unit = 15.0 / 16 * w.params * 2;
  const double expected[] = {2.0, 2.0, 2.0, 3.0};
  for (int zero = 0; zero <= 3; ++zero) {
    w.zero = zero;
    const auto s = test::step_on(w, "1x10gbe");
    EXPECT_NEAR(s.inter_wire_bytes, expected[zero] * unit, 1e-9 * unit) << "ZeRO-" << zero;
  }
}

// DeepSpeed's ZeRO-3 knobs decide the calls: one gather per module and pass,
// fewer in the backward for modules still live, reduce-scatters per bucket.
TEST(Formulas, Zero3CallsFollowDeepSpeedsKnobs) {
  Zero3Config c;  // DeepSpeed's defaults
  const double psi = 16e9;  // 16 layers x 4 modules of 250M parameters
  Zero3Calls z = zero3_calls(c, psi, 16);
  EXPECT_DOUBLE_EQ(z.modules, 64);
  EXPECT_DOUBLE_EQ(z.module_params, 250e6);
  EXPECT_DOUBLE_EQ(z.forward_gathers, 64);
  // Reuse distance 1e9: modules j <= 1e9 / (2 x 250M) = 2 from the end stay
  // (3 of them), and 4 fit max_live 1e9: 3 kept.
  EXPECT_DOUBLE_EQ(z.kept_modules, 3);
  EXPECT_DOUBLE_EQ(z.backward_gathers, 61);
  EXPECT_DOUBLE_EQ(z.prefetch_depth, 1);  // 5e7 < one module: one fetch ahead
  EXPECT_DOUBLE_EQ(z.reduce_scatters, 32);  // 16e9 / 5e8
  c.max_live = 0;
  c.prefetch_bucket = 0;
  c.reduce_bucket = 1e9;
  z = zero3_calls(c, psi, 16);
  EXPECT_DOUBLE_EQ(z.backward_gathers, 64);
  EXPECT_DOUBLE_EQ(z.prefetch_depth, 0);
  EXPECT_DOUBLE_EQ(z.reduce_scatters, 16);
  c.modules_per_layer = 1;  // FSDP-style units: one per layer
  EXPECT_DOUBLE_EQ(zero3_calls(c, psi, 16).forward_gathers, 16);
}

TEST(Formulas, Zero3CallsAndPrefetchInTheStep) {
  auto w = test::small_workload();  // 2^30 parameters, 16 layers, 2 x 8 A100
  w.zero = 3;
  w.overlap.param_gather = 1.0;
  const auto s = test::step_on(w, "8x200g-hdr-ib");
  ASSERT_EQ(s.items.size(), 3u);
  const Zero3Calls z = zero3_calls(w.zero3, w.params, 16);
  EXPECT_DOUBLE_EQ(s.items[0].calls, z.forward_gathers);
  EXPECT_DOUBLE_EQ(s.items[1].calls, z.backward_gathers);
  EXPECT_DOUBLE_EQ(s.items[0].bytes_per_call, z.module_params * 2);
  EXPECT_LT(s.items[0].exposed_us, s.items[0].total_us);  // prefetched under the forward
  w.zero3.prefetch_bucket = 0;  // no prefetch: every gather waits
  const auto waits = test::step_on(w, "8x200g-hdr-ib");
  EXPECT_DOUBLE_EQ(waits.items[0].exposed_us, waits.items[0].total_us);
  EXPECT_DOUBLE_EQ(waits.items[1].exposed_us, waits.items[1].total_us);
}

TEST(Formulas, TensorParallelAllReducesPerLayerPerMicroBatch) {
  auto w = test::small_workload();
  w.tp = 8;
  w.micro_batch = 2;
  w.global_batch = 8;  // dp 2 x micro-batch 2 x 2 micro-batches
  for (const Recompute recompute : {Recompute::none, Recompute::full, Recompute::selective}) {
    w.recompute = recompute;
    const auto s = test::step_on(w, "8x200g-hdr-ib");
    ASSERT_EQ(s.items.front().group, "tp");
    const auto& tp = s.items.front();
    EXPECT_EQ(tp.where, "intra");
    EXPECT_DOUBLE_EQ(tp.bytes_per_call, 2.0 * 1024 * 2048 * 2);  // b*s*h bf16
    // m x layers x 4 (6 with full recompute; selective recompute repeats
    // only the attention core, between the all-reduces)
    EXPECT_DOUBLE_EQ(tp.calls, 2 * 16 * (recompute == Recompute::full ? 6 : 4));
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

// Megatron's scatter/gather: each of a stage's tp ranks sends b*s*h/tp, and
// the receiving stage all-gathers the b*s*h over its node.
TEST(Formulas, PipelineSendsAreScatteredOverTensorParallelRanks) {
  auto w = test::small_workload();
  w.tp = 8;
  w.pp = 2;  // one stage per node
  w.global_batch = 8;
  const double bsh = 1.0 * 1024 * 2048 * 2;
  auto s = test::step_on(w, "8x200g-hdr-ib");
  const auto pp = std::find_if(s.items.begin(), s.items.end(), [](const CommItem& i) { return i.group == "pp"; });
  ASSERT_NE(pp, s.items.end());
  EXPECT_DOUBLE_EQ(pp->bytes_per_call, bsh / 8);
  EXPECT_EQ(pp->where, "inter");
  EXPECT_EQ(s.items.back().name, "PP all-gather (scatter/gather)");
  EXPECT_EQ(s.items.back().op, Op::all_gather);
  EXPECT_DOUBLE_EQ(s.items.back().bytes_per_call, bsh);
  EXPECT_DOUBLE_EQ(s.items.back().calls, pp->calls);
  w.pp_scatter_gather = false;
  s = test::step_on(w, "8x200g-hdr-ib");
  EXPECT_DOUBLE_EQ(s.items.back().bytes_per_call, bsh);  // every rank sends the whole tensor
  EXPECT_EQ(s.items.back().group, "pp");
}

// Layers that do not divide pp x v: the fullest stage sets the pace.
TEST(Formulas, UnevenStagesCostTheFullestStagesTime) {
  EXPECT_EQ(max_stage_layers(126, 16, 1), 8);
  EXPECT_EQ(max_stage_layers(126, 16, 2), 8);
  EXPECT_EQ(max_stage_layers(32, 4, 1), 8);
  EXPECT_EQ(max_stage_layers(30, 4, 2), 8);  // chunks of 4 or 3
  auto w = test::small_workload();
  w.layers = 18;  // 4 stages of 5, 5, 4, 4
  w.pp = 4;
  w.global_batch = 32;
  const auto s = test::step_on(w, "8x200g-hdr-ib");
  EXPECT_EQ(s.parallel.stage_layers, 5);
  EXPECT_NEAR(s.imbalance_us, s.compute_us * (5.0 * 4 / 18 - 1), 1e-9 * s.compute_us);
  EXPECT_NEAR(s.bubble_us, (s.compute_us + s.imbalance_us) * 3.0 / 8, 1e-9 * s.compute_us);
  EXPECT_NEAR(s.step_us, s.compute_us + s.imbalance_us + s.bubble_us + s.exposed_us, 1e-9 * s.step_us);
}

TEST(Formulas, EveryBucketedCallPaysTheLatency) {
  auto w = test::small_workload();  // 2^30 bf16 gradients = 2 GiB
  w.bucket_bytes = 32ull << 20;     // 64 calls
  const auto many = test::step_on(w, "1x10gbe");
  w.bucket_bytes = 2ull << 30;  // 1 call
  const auto one = test::step_on(w, "1x10gbe");
  ASSERT_DOUBLE_EQ(many.items[0].calls, 64);
  ASSERT_DOUBLE_EQ(one.items[0].calls, 1);
  ASSERT_EQ(many.items[0].algorithm, "ring");
  ASSERT_EQ(many.items[0].protocol, "Simple");
  // NCCL's ring all_reduce on 16 ranks over 2 nodes, Simple: 8.4 us, 28
  // NVLink steps of 3.4, 2 network steps of 14 + 28 (TCP), x 1.4 across
  // nodes; the bandwidth terms add up the same.
  const double latency = (8.4 + 28 * 3.4 + 2 * (14.0 + 28.0)) * 1.4;
  EXPECT_NEAR(many.items[0].latency_us, latency, 1e-9 * latency);
  EXPECT_NEAR(many.comm_us - one.comm_us, 63 * latency, 1e-6 * many.comm_us);
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
  w.recompute = Recompute::full;  // 4/3 the hardware FLOPs at the same achieved rate
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
