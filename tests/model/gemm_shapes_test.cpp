// The products one transformer layer runs on one GPU (issue 38), from the
// workloads the project ships.
#include "fabricbench/model/gemm_shapes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <tuple>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/model/step.hpp"
#include "model_workloads.hpp"

namespace fb::model {
namespace {

// Megatron's split at tp 8: QKV and MLP up by columns, attention out and MLP
// down by rows; backward turns each forward (m, n, k) into (m, k, n) for the
// data gradient and (k, n, m) for the weight gradient.
TEST(GemmShapes, OneLayerOfTheSeventyBillionAtTensorParallelEight) {
  const Workload w = test::profile_workload("llama-70b-3d-16x8-h100.yaml");  // mb 1 x 4096 tokens, hidden 8192, tp 8
  const auto s = layer_gemm_shapes(w);
  ASSERT_EQ(s.size(), 12u);
  const auto shape = [](const GemmShape& g) { return std::tuple{g.name, g.m, g.n, g.k}; };
  EXPECT_EQ(shape(s[0]), std::tuple("qkv", 4096LL, 3072LL, 8192LL));
  EXPECT_EQ(shape(s[1]), std::tuple("qkv dgrad", 4096LL, 8192LL, 3072LL));
  EXPECT_EQ(shape(s[2]), std::tuple("qkv wgrad", 8192LL, 3072LL, 4096LL));
  EXPECT_EQ(shape(s[3]), std::tuple("attn_out", 4096LL, 8192LL, 1024LL));
  EXPECT_EQ(shape(s[6]), std::tuple("mlp_up", 4096LL, 4096LL, 8192LL));
  EXPECT_EQ(shape(s[9]), std::tuple("mlp_down", 4096LL, 8192LL, 4096LL));
  // Their FLOPs are the layer's 3 x 24 h^2 per token over tp (forward and backward, no attention scores).
  double flops = 0;
  for (const auto& g : s) flops += g.flops();
  EXPECT_NEAR(flops, 3 * 24.0 * 8192 * 8192 * 4096 / 8, 1e-6 * flops);
}

// What `fabricbench step` sets beside the products it measures: each of the
// layer's products at the rate the model prices it. From the record `gemm
// --shapes-of` wrote on the H200 (scripts/device-check.sh, 2026-12-04), each
// shape is the record's own rate times of_gemm; together they are the rate
// the model's step runs the products at.
TEST(GemmShapes, EachProductIsPricedAtItsOwnMeasuredRateAndTogetherAtTheStepsRate) {
  const std::string record = std::string(FB_SOURCE_DIR) + "/results/h200-device-check-2026-12-04/gemm-shapes-7b.jsonl";
  const Workload w = test::seven_billion_on("h200-sxm", "{gemm_curve: " + record + ", of_gemm: 0.6}");
  const LayerPricing p = price_layer_shapes(w, builtin_presets());
  EXPECT_EQ(p.source, "measured_curve");
  ASSERT_EQ(p.shapes.size(), 12u);
  const Results r = load_results(record);
  double flops = 0, seconds = 0;
  for (const PricedShape& s : p.shapes) {
    double measured = 0;
    for (const GemmLine& g : r.gemms)
      if (g.dtype == "bfloat16" && g.m == s.shape.m && g.n == s.shape.n && g.k == s.shape.k) measured = g.tflops;
    ASSERT_GT(measured, 0) << s.shape.name << ": the record measured every shape of this layer";
    EXPECT_NEAR(s.tflops, 0.6 * measured, 1e-9 * measured) << s.shape.name;
    flops += s.shape.flops();
    seconds += s.shape.flops() / (s.tflops * 1e12);
  }
  const StepCost step = test::step_on(w, "");
  EXPECT_NEAR(flops / seconds / 1e12, step.rate_tflops, 1e-9 * step.rate_tflops);
  EXPECT_NEAR(p.layer_tflops, step.rate_tflops, 1e-9 * step.rate_tflops);
  // The shapes differ in rate (the record's spread): one rate for all would hide it.
  double lo = 1e300, hi = 0;
  for (const PricedShape& s : p.shapes) lo = std::min(lo, s.tflops), hi = std::max(hi, s.tflops);
  EXPECT_GT(hi, lo * 1.01);
}

// A rate stated for the whole step prices no shape: the step says so rather
// than inventing one per product.
TEST(GemmShapes, AStatedRatePricesNoShape) {
  const LayerPricing mfu = price_layer_shapes(test::seven_billion_on("h100-sxm", "{mfu: 0.4}"), builtin_presets());
  EXPECT_EQ(mfu.source, "mfu");
  EXPECT_TRUE(mfu.shapes.empty());
  EXPECT_GT(mfu.layer_tflops, 0);
  const LayerPricing preset =
      price_layer_shapes(test::seven_billion_on("h100-sxm", "{gemm_curve: preset, of_gemm: 0.6}"), builtin_presets());
  EXPECT_EQ(preset.source, "preset_curve");
  EXPECT_EQ(preset.shapes.size(), 12u);
}

TEST(GemmShapes, AModelGivenByItsFlopsHasNoShapes) {
  Workload w = test::profile_workload("llama-7b-zero1-2x8-h100.yaml");
  w.forward_flops_per_sample = 1e9;
  try {
    (void)layer_gemm_shapes(w);
    FAIL() << "no shapes to give";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("forward FLOPs per sample: it has no matrix shapes"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fb::model
