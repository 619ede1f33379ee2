// Issue 38: attention's score and value products priced in flash attention's
// own kernel at the GPU's cited attention curve (model/attention.hpp), and at
// the GEMM rate, saying so, where the GPU has no curve, the workload's head
// dimension is not the curve's, or the workload runs no flash attention.
#include <gtest/gtest.h>

#include <string>

#include "fabricbench/model/step.hpp"
#include "model_workloads.hpp"

namespace fb::model {
namespace {

bool attention_says(const StepCost& s, const std::string& text) {
  for (const auto& a : s.assumptions)
    if (a.find(text) != std::string::npos) return true;
  return false;
}

// The step's compute line, for a failure's message.
std::string compute_line(const StepCost& s) {
  for (const auto& a : s.assumptions)
    if (a.starts_with("compute:")) return a;
  return "(no compute line)";
}

// 24 layers of h 2048, 16 heads of 128, sequence 16384, one sequence per
// micro-batch and GPU: 8 GPUs (dp 8), the preset GEMM curve for the products.
Workload long_sequence(const std::string& gpu, int heads = 16) {
  Workload w;
  w.name = "long";
  w.params = 1.3e9;
  w.layers = 24;
  w.hidden = 2048;
  w.heads = heads;
  w.seq_len = 16384;
  w.micro_batch = 1;
  w.global_batch = 8;
  w.gemm.source = "preset";
  w.gemm.of_gemm = 1;
  w.cluster.gpu = w.compute_gpu = gpu;
  w.cluster.gpus_per_node = 8;
  return w;
}

// The forward's FLOPs per GPU, as the model counts them: 4 s h per token and
// layer = 4 x 16384 x 2048 x 24 layers x 16384 tokens per GPU.
constexpr double kForwardFlops = 4.0 * 16384 * 2048 * 24 * 16384;

TEST(Attention, TheH100PresetIsTheCitedFlashAttention2CurveBelowItsGemmRate) {
  const GpuPreset& g = builtin_presets().gpu("h100-sxm", "test");
  const AttentionPresetCurve& c = g.attention_curve;
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_NE(c.source.find("arXiv 2407.08608"), std::string::npos) << c.source;
  EXPECT_NE(c.source.find("figure 5"), std::string::npos) << c.source;
  EXPECT_NE(c.source.find("figure 6"), std::string::npos) << c.source;
  // The paper's sequence lengths, 512 to 16k; every rate under the GEMM
  // curve's at 8192 (797.51): the fused kernel runs below cuBLAS's products.
  for (const auto* points : {&c.forward_causal, &c.backward}) {
    ASSERT_EQ(points->size(), 6u);
    EXPECT_EQ(points->front().first, 512);
    EXPECT_EQ(points->back().first, 16384);
    for (const auto& [seq, tflops] : *points) EXPECT_LT(tflops, 797.51) << seq;
  }
  EXPECT_TRUE(builtin_presets().gpu("a100-80gb", "test").attention_curve.empty())
      << "no A100 figures were found: none is made up";
}

TEST(Attention, ALongSequenceStepPricesItAtTheCitedRate) {
  const StepCost s = test::step_on(long_sequence("h100-sxm"), "");
  // 16384 is the curve's last point: forward 335 TFLOP/s with the causal
  // mask on half the matrix; backward 322 on 2.5 times the forward's FLOPs,
  // half of them under the mask.
  const double forward_us = 0.5 * kForwardFlops / 335e6;
  const double backward_us = 0.5 * 2.5 * kForwardFlops / 322e6;
  EXPECT_NEAR(s.attention_us, forward_us + backward_us, 1e-6 * s.attention_us);
  // The GEMM rate prices the rest: the hardware FLOPs less attention's
  // 12 s h per token and layer (3 x the forward's).
  const double hardware_per_gpu = s.model_flops / 8;
  EXPECT_NEAR(s.compute_us, (hardware_per_gpu - 3 * kForwardFlops) / (s.rate_tflops * 1e6) + s.attention_us,
              1e-9 * s.compute_us);
  EXPECT_TRUE(attention_says(s,
                             "attention's score and value products in flash attention's kernel at h100-sxm's attention "
                             "curve for sequence 16384 (head dim 128"))
      << compute_line(s);
  EXPECT_TRUE(attention_says(s, "forward 335 TFLOP/s with the mask, backward 322 TFLOP/s")) << compute_line(s);
  EXPECT_TRUE(attention_says(s, "arXiv 2407.08608")) << compute_line(s);
  // Even on half the matrix the kernel takes longer than the GEMM rate took
  // for the whole: the step's compute grows.
  EXPECT_GT(s.attention_us, 3 * kForwardFlops / (s.rate_tflops * 1e6));
  EXPECT_GT(s.compute_us, hardware_per_gpu / (s.rate_tflops * 1e6));
}

TEST(Attention, FullRecomputeRunsTheKernelsForwardTwice) {
  Workload w = long_sequence("h100-sxm");
  w.recompute = Recompute::full;
  const StepCost s = test::step_on(w, "");
  const double forward_us = 2 * 0.5 * kForwardFlops / 335e6;
  const double backward_us = 0.5 * 2.5 * kForwardFlops / 322e6;
  EXPECT_NEAR(s.attention_us, forward_us + backward_us, 1e-6 * s.attention_us);
  // The GEMM rate no longer prices attention's 16 s h per token and layer.
  EXPECT_NEAR(s.compute_us, (s.model_flops * 4 / 3 / 8 - 4 * kForwardFlops) / (s.rate_tflops * 1e6) + s.attention_us,
              1e-9 * s.compute_us);
}

// Between the paper's points the rate is read log-log, as the GEMM curve is;
// beyond them it is the edge's, and the step says so.
TEST(Attention, TheRateFollowsTheSequenceLength) {
  Workload w = long_sequence("h100-sxm");
  w.seq_len = 32768;
  const StepCost beyond = test::step_on(w, "");
  EXPECT_TRUE(attention_says(beyond, "for sequence 32768 (outside it: its edge)")) << compute_line(beyond);
  w.seq_len = 2896;  // about the geometric mean of 2048 and 4096: about sqrt(298 x 319) = 308.3
  const StepCost between = test::step_on(w, "");
  EXPECT_TRUE(attention_says(between, "forward 308.3 TFLOP/s")) << compute_line(between);
}

TEST(Attention, WithoutACurveTheGemmRatePricesItAndTheStepSaysSo) {
  const StepCost a100 = test::step_on(long_sequence("a100-80gb"), "");
  EXPECT_EQ(a100.attention_us, 0);
  EXPECT_NEAR(a100.compute_us, a100.model_flops / 8 / (a100.rate_tflops * 1e6), 1e-9 * a100.compute_us);
  EXPECT_TRUE(attention_says(a100,
                             "attention's score and value products at that GEMM rate too: a100-80gb has no attention "
                             "curve in its preset"));
  // Head dim 64 (32 heads of h 2048): the H100's curve is head dim 128's.
  const StepCost hd64 = test::step_on(long_sequence("h100-sxm", 32), "");
  EXPECT_EQ(hd64.attention_us, 0);
  EXPECT_TRUE(attention_says(hd64, "h100-sxm's attention curve is for head dim 128, this workload's is 64"))
      << compute_line(hd64);
  // Without flash attention the scores are batched GEMMs at the GEMM rate.
  Workload plain = long_sequence("h100-sxm");
  plain.flash_attention = false;
  const StepCost p = test::step_on(plain, "");
  EXPECT_EQ(p.attention_us, 0);
  EXPECT_TRUE(
      attention_says(p, "attention's score and value products as batched GEMMs at that rate (no flash attention)"));
  // A whole step's rate (MFU) holds attention already.
  Workload mfu = long_sequence("h100-sxm");
  mfu.gemm = GemmCurve{};
  mfu.mfu = 0.4;
  EXPECT_EQ(test::step_on(mfu, "").attention_us, 0);
}

}  // namespace
}  // namespace fb::model
