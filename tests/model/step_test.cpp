// The step's inputs beyond a transformer at a stated rate: models given by
// their FLOPs per sample, compute from a GEMM curve, and the network
// bandwidth that brings the exposed share under a target.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/model/quotes.hpp"
#include "fabricbench/model/step.hpp"
#include "model_workloads.hpp"
#include "process.hpp"

namespace fb::model {
namespace {

// A CNN by its forward FLOPs per sample: training FLOPs are 3x that
// (backward = 2x forward), data parallel, gradients in fusion-buffer buckets.
TEST(Step, AModelGivenByItsFlopsPerSample) {
  const Workload w = parse_workload(R"(
model: {params: 25.6M, forward_flops_per_sample: 8.2G}
training: {global_batch: 4096, micro_batch: 256, dtype: fp16, grad_dtype: fp16}
parallel: {bucket: 64M}
compute: {tflops: 100}
cluster: {gpu: a100-80gb, nodes: 2, gpus_per_node: 8}
)");
  const StepCost s = test::step_on(w, "8x200g-hdr-ib");
  EXPECT_DOUBLE_EQ(s.model_flops, 3 * 8.2e9 * 4096);
  EXPECT_NEAR(s.compute_us, 3 * 8.2e9 * 4096 / (16 * 100e12) * 1e6, 1e-9 * s.compute_us);
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].name, "DP gradient all-reduce");
  EXPECT_DOUBLE_EQ(s.items[0].calls, 1);  // 51.2 MB in one 64 MiB fusion buffer
  EXPECT_DOUBLE_EQ(s.items[0].bytes_per_call, 25.6e6 * 2);
  EXPECT_DOUBLE_EQ(s.tokens, 4096);  // samples
}

// busbw_share stretches the bandwidth term of its group's calls only: the
// latency stays NCCL's, and the other groups' calls keep their price.
TEST(Step, AFrameworksShareOfNcclBusbwStretchesOnlyItsGroupsBandwidthTerm) {
  Workload w = test::profile_workload("llama-70b-3d-16x8-h100.yaml");
  ASSERT_GT(w.tp, 1);
  const StepCost nccl = test::step_on(w, "8x400g-ndr-ib");
  w.busbw_share.dp = 0.25;
  const StepCost quarter = test::step_on(w, "8x400g-ndr-ib");
  ASSERT_EQ(nccl.items.size(), quarter.items.size());
  int dp_items = 0;
  for (std::size_t i = 0; i < nccl.items.size(); ++i) {
    const CommItem &a = nccl.items[i], &b = quarter.items[i];
    ASSERT_EQ(a.name, b.name);
    EXPECT_DOUBLE_EQ(a.latency_us, b.latency_us) << a.name;
    if (a.group != "dp") {
      EXPECT_DOUBLE_EQ(a.time_per_call_us, b.time_per_call_us) << a.name;
      continue;
    }
    ++dp_items;
    EXPECT_NEAR(b.time_per_call_us - b.latency_us, 4 * (a.time_per_call_us - a.latency_us),
                1e-9 * b.time_per_call_us)
        << a.name;
    EXPECT_NEAR(b.busbw_gbps, a.busbw_gbps / 4, 1e-9 * a.busbw_gbps) << a.name;
    EXPECT_NE(b.formula.find("busbw_share: dp"), std::string::npos) << b.formula;
  }
  EXPECT_GT(dp_items, 0);
  bool said = false;
  for (const auto& a : quarter.assumptions) said = said || a.find("busbw share: tp 1, dp 0.25, pp 1") == 0;
  EXPECT_TRUE(said) << "the share is among the assumptions";
}

Workload gemm_workload(const std::string& compute) {
  return parse_workload(R"(
model: {params: 1B, layers: 16, hidden: 2048, heads: 16, seq_len: 2048}
training: {global_batch: 16, micro_batch: 1}
compute: )" + compute + R"(
cluster: {gpu: h200-sxm, nodes: 1, gpus_per_node: 8}
)");
}

// The rate follows the workload's GEMM size: the cube root of m n k of its
// MLP up-projection (m = 2048 tokens, n = 4 x 2048, k = 2048: 2048 x 4^(1/3)).
TEST(Step, ComputeFollowsTheGemmCurveAtTheWorkloadsSize) {
  const Workload w = gemm_workload("{gemm_curve: [[2048, 400], [8192, 800]], of_gemm: 0.5}");
  EXPECT_EQ(w.gemm.source, "stated");
  const StepCost s = test::step_on(w, "");
  // A third of the way on log axes from 2048 to 8192: 400 x 2^(1/3).
  EXPECT_NEAR(s.rate_tflops, 0.5 * 400 * std::cbrt(2.0), 1e-9);
  const Workload bigger = gemm_workload("{gemm_curve: [[2048, 400], [8192, 800]], of_gemm: 0.5, gemm_size: 9000}");
  EXPECT_NEAR(test::step_on(bigger, "").rate_tflops, 0.5 * 800, 1e-9);  // past the curve: its edge
}

// A `fabricbench gemm --out` record: the slowest rank's TFLOP/s per size.
TEST(Step, AGemmCurveFromAFabricbenchGemmRecord) {
  const std::string dir = test::make_temp_dir("fb_gemm_");
  {
    std::ofstream out(dir + "/gemm.jsonl");
    out << R"({"type":"run","schema_version":")" << schema_version() << R"(","command":"gemm","nodes":1})" << "\n";
    for (const auto& [size, rank, tflops] : std::vector<std::tuple<int, int, double>>{
             {2048, 0, 420}, {2048, 1, 400}, {8192, 0, 790}, {8192, 1, 800}, {4096, 0, 999}})
      out << R"({"type":"gemm","rank":)" << rank << R"(,"dtype":")" << (size == 4096 ? "fp16" : "bf16")
          << R"(","m":)" << size << R"(,"n":)" << size << R"(,"k":)" << size << R"(,"tflops":)" << tflops << "}\n";
    out << R"({"type":"summary","status":"complete"})" << "\n";
    std::ofstream(dir + "/w.yaml") << "model: {params: 1B, layers: 16, hidden: 2048, heads: 16, seq_len: 2048}\n"
                                      "training: {global_batch: 16, micro_batch: 1}\n"
                                      "compute: {gemm_curve: gemm.jsonl, of_gemm: 0.5, gemm_size: 4096}\n"
                                      "cluster: {gpu: h200-sxm, nodes: 1, gpus_per_node: 8}\n";
  }
  const Workload w = load_workload(dir + "/w.yaml");  // the record beside it
  ASSERT_EQ(w.gemm.points.size(), 2u);                // bf16 lines only
  EXPECT_DOUBLE_EQ(w.gemm.points[0].second, 400);     // the slower rank
  EXPECT_DOUBLE_EQ(w.gemm.points[1].second, 790);
  // A stated gemm_size prices one size: halfway on log axes from 2048 to 8192.
  EXPECT_NEAR(test::step_on(w, "").rate_tflops, 0.5 * 400 * std::pow(790.0 / 400, 1.0 / 2), 1e-9);
  std::filesystem::remove_all(dir);
}

// Issue 38: the record `fabricbench gemm --out` wrote on the H200 says
// "bfloat16" and "half"; workloads say bf16 and fp16. One vocabulary: the
// workload reads it (it ended with "no bf16 gemm lines").
TEST(Step, TheGemmRecordTheBinaryWroteOnAnH200IsReadInTheWorkloadsDtype) {
  const std::string record = std::string(FB_SOURCE_DIR) + "/results/h200-device-check-2026-11-30/gemm.jsonl";
  for (const auto& [dtype, tflops] : {std::pair{"bf16", 806.699211189216},
                                      {"fp16", 764.8159417644533},
                                      {"bfloat16", 806.699211189216},
                                      {"float16", 764.8159417644533}}) {
    const Workload w = parse_workload(std::string("model: {params: 1B, layers: 16, hidden: 2048, heads: 16, "
                                                  "seq_len: 2048}\ntraining: {global_batch: 16, micro_batch: 1, "
                                                  "dtype: ") +
                                      dtype + "}\ncompute: {gemm_curve: " + record +
                                      ", of_gemm: 0.5}\ncluster: {gpu: h200-sxm, nodes: 1, gpus_per_node: 8}\n");
    ASSERT_EQ(w.gemm.points.size(), 1u) << dtype;
    EXPECT_DOUBLE_EQ(w.gemm.points[0].second, tflops) << dtype;
    EXPECT_EQ(w.dtype, std::string(dtype).find('b') == 0 ? "bf16" : "fp16") << "the workloads' own spelling";
  }
}

// Issue 38: `gemm --shapes-of llama-7b-zero1-2x8-h100.yaml` on the H200
// (scripts/device-check.sh, 2026-12-04) measured the layer's 9 distinct
// shapes; the model prices its 12 products from them, each at its own rate.
TEST(Step, ALayerIsPricedShapeByShapeFromTheShapesTheH200Measured) {
  const std::string record = std::string(FB_SOURCE_DIR) + "/results/h200-device-check-2026-12-04/gemm-shapes-7b.jsonl";
  const auto workload = [&](int micro_batch) {
    return parse_workload(
        "model: {params: 6.7B, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}\n"
        "training: {global_batch: 256, micro_batch: " +
        std::to_string(micro_batch) + ", dtype: bf16}\ncompute: {gemm_curve: " + record +
        ", of_gemm: 0.5}\ncluster: {gpu: h200-sxm, nodes: 1, gpus_per_node: 8}\n");
  };
  const Workload measured = workload(2);
  ASSERT_EQ(measured.gemm.shapes.size(), 9u);
  double slowest = 1e9, fastest = 0;
  for (const auto& s : measured.gemm.shapes)
    slowest = std::min(slowest, s.tflops), fastest = std::max(fastest, s.tflops);
  const StepCost at_shapes = test::step_on(measured, "");
  // The layer's rate is a FLOP-weighted mean of its shapes' rates: inside their range, not any one of them.
  EXPECT_GT(at_shapes.rate_tflops, 0.5 * slowest);
  EXPECT_LT(at_shapes.rate_tflops, 0.5 * fastest);
  bool said = false;
  for (const auto& a : at_shapes.assumptions)
    said = said || (a.find("a layer's 12 products (") != std::string::npos &&
                    a.find("each measured at its own shape in " + record) != std::string::npos);
  EXPECT_TRUE(said) << "the compute assumption names the shapes and the record";
  // Micro-batch 1: no shape of the layer was measured; each is read from the curve by its size.
  const StepCost from_curve = test::step_on(workload(1), "");
  said = false;
  for (const auto& a : from_curve.assumptions)
    said = said || a.find("0 of them measured at their own shape") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_GT(from_curve.rate_tflops, 0.5 * slowest * 0.99);
}

// The bandwidth target: at it the exposed share is at most the target, a
// little below it the share is above it; and it uses the workload's own
// windows (more overlap, less bandwidth needed).
TEST(Step, TheBandwidthThatBringsTheExposedShareUnderTheTarget) {
  auto w = test::small_workload();  // DDP, 2 x 8 A100
  w.global_batch = 64;
  const StepCost bare = predict_step(w, test::preset_fabric(w, "1x10gbe"), builtin_presets(), 0.20);
  ASSERT_TRUE(std::isfinite(bare.target_gbps));
  ASSERT_GT(bare.target_gbps, 0);
  const auto share_at = [&](double gbps) {
    Fabric f = test::preset_fabric(w, "1x10gbe");
    f.inter.bw_gbps = gbps;
    return predict_step(w, f, builtin_presets(), 0.20).exposed_share;
  };
  EXPECT_LE(share_at(bare.target_gbps), 0.20);
  EXPECT_GT(share_at(bare.target_gbps * 0.99), 0.20);
  w.overlap.grad_reduce = 1.0;
  const StepCost hidden = predict_step(w, test::preset_fabric(w, "1x10gbe"), builtin_presets(), 0.20);
  EXPECT_LT(hidden.target_gbps, bare.target_gbps);
  // A step whose exposed share never gets that low says so.
  w.tp = 8;
  w.global_batch = 8;
  const StepCost tp = predict_step(w, test::preset_fabric(w, "8x200g-hdr-ib"), builtin_presets(), 1e-4);
  EXPECT_TRUE(std::isinf(tp.target_gbps));
  EXPECT_GT(tp.exposed_floor, 1e-4);
}

// A quote for "400G InfiniBand" must say how many HCAs: one and eight differ
// eightfold. The example quotes compare InfiniBand with RoCE and a 4-GPU PCIe node.
TEST(Step, QuotesNameTheirNicCounts) {
  const QuoteSet set = parse_quotes(R"(
job: {tokens: 1B}
quotes:
  - {name: a, gpu: h100-sxm, gpus_per_node: 8, nodes: 2, network: 400g-ndr-ib, price_per_gpu_hour: 2}
)");
  try {
    evaluate_quotes(set, test::profile_workload("llama-7b-zero1-2x8-h100.yaml"), builtin_presets(), "");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("quote 'a': network '400g-ndr-ib': say how many NICs"), std::string::npos)
        << e.what();
  }
  const QuoteSet examples = load_quotes(std::string(FB_SOURCE_DIR) + "/profiles/quotes/h100-ib-vs-roce.yaml");
  const auto ranked = evaluate_quotes(examples, test::profile_workload("llama-7b-zero1-2x8-h100.yaml"),
                                      builtin_presets(), "");
  ASSERT_EQ(ranked.size(), examples.quotes.size());
  for (const auto& r : ranked) {
    if (r.quote.nodes > 1) {
      EXPECT_NE(r.step.network.find('x'), std::string::npos) << r.step.network;
    }
  }
}

}  // namespace
}  // namespace fb::model
