// Memory per GPU: 16 bytes per parameter sharded by ZeRO stage, activations,
// and the smallest DP or TP that fits.
#include "fabricbench/model/memory.hpp"

#include <gtest/gtest.h>

#include "fabricbench/model/formulas.hpp"
#include "model_workloads.hpp"

namespace fb::model {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

TEST(Memory, ModelStatesPerZeroStage) {
  const double psi = 1e9;
  EXPECT_DOUBLE_EQ(model_state_bytes(psi, 0, 64), 16e9);
  EXPECT_DOUBLE_EQ(model_state_bytes(psi, 1, 4), 4e9 + 3e9);
  EXPECT_DOUBLE_EQ(model_state_bytes(psi, 2, 7), 2e9 + 2e9);
  EXPECT_DOUBLE_EQ(model_state_bytes(psi, 3, 16), 1e9);
}

TEST(Memory, ActivationsFollowKorthikanti) {
  ActivationShape a{1, 2048, 4096, 32, 32, 1, 1, 8, 2.0, Recompute::none, false};
  const double sbh = 2048.0 * 4096;
  // s*b*h*(34 + 5*a*s/h) per layer, 32 layers.
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * sbh * (34 + 5.0 * 32 * 2048 / 4096));
  a.flash_attention = true;
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * sbh * 34);
  a.tp = 8;  // 10 + 24/t
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * sbh * 13);
  a.recompute = Recompute::full;  // inputs only, plus one layer recomputed
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * 2 * sbh + sbh * 13);
  a.sequence_parallel = true;  // 34/t per layer, the inputs split over tp too
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * 2 * sbh / 8 + sbh * 34 / 8);
  a.sequence_parallel = false;
  a.flash_attention = false;
  a.recompute = Recompute::selective;  // no a*s^2 scores kept
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * sbh * 13);
  a.flash_attention = true;
  a.recompute = Recompute::none;
  a.pp = 4;  // 1F1B: p micro-batches in flight on the first stage
  a.layers_per_stage = 8;
  EXPECT_DOUBLE_EQ(activation_bytes(a), 8 * 4 * sbh * 13);
}

// Megatron-LM's fp32 main_grad: 4 bytes of gradient per parameter, sharded
// with the gradients.
TEST(Memory, AnFp32MainGradAddsTwoBytesPerParameter) {
  const double psi = 1e9;
  EXPECT_DOUBLE_EQ(model_state_bytes(psi, 0, 8, 4), 18e9);
  EXPECT_DOUBLE_EQ(model_state_bytes(psi, 1, 4, 4), 6e9 + 3e9);
  EXPECT_DOUBLE_EQ(model_state_bytes(psi, 2, 8, 4), 2e9 + 2e9);
  EXPECT_DOUBLE_EQ(model_state_bytes(psi, 3, 18, 4), 1e9);
  auto w = test::small_workload();
  const GpuPreset& gpu = builtin_presets().gpu("a100-80gb", "gpu");
  const double bf16 = memory_fit(w, gpu)[0].states_bytes;
  w.grad_memory_bytes = 4;
  EXPECT_DOUBLE_EQ(memory_fit(w, gpu)[0].states_bytes - bf16, 2 * w.params);
}

// ZeRO-3 holds up to stage3_max_live_parameters gathered at once.
TEST(Memory, Zero3CountsItsLiveGatheredParameters) {
  auto w = test::small_workload();  // 2^30 parameters
  const GpuPreset& gpu = builtin_presets().gpu("a100-80gb", "gpu");
  auto fits = memory_fit(w, gpu);
  EXPECT_DOUBLE_EQ(fits[3].gathered_bytes, 1e9 * 2);  // DeepSpeed's default 1e9, bf16
  EXPECT_DOUBLE_EQ(fits[1].gathered_bytes, 0);
  w.zero3.max_live = 1e8;
  fits = memory_fit(w, gpu);
  EXPECT_DOUBLE_EQ(fits[3].gathered_bytes, 1e8 * 2);
  EXPECT_DOUBLE_EQ(fits[3].total_bytes, fits[3].states_bytes + fits[3].gathered_bytes + fits[3].activation_bytes);
}

TEST(Memory, FitsAndTheSmallestDegreeThatFits) {
  auto w = test::small_workload();  // 2^30 params on 16 A100 80GB
  w.params = 20e9;                  // 320 GB of states unsharded
  const auto fits = memory_fit(w, builtin_presets().gpu("a100-80gb", "gpu"));
  ASSERT_EQ(fits.size(), 4u);
  EXPECT_FALSE(fits[0].fits);
  EXPECT_EQ(fits[0].smallest_dp, 0);  // DDP does not shard
  EXPECT_EQ(fits[0].smallest_tp, 4);  // 16 x 20e9 / 4 = 80 GB of states < 80 GiB; tp 2: 160 GB
  EXPECT_TRUE(fits[3].fits);
  EXPECT_DOUBLE_EQ(fits[3].states_bytes, 20e9);
  EXPECT_DOUBLE_EQ(fits[3].total_bytes, 20e9 + 2e9 + fits[3].activation_bytes);  // 1e9 live parameters
  EXPECT_DOUBLE_EQ(fits[3].capacity_bytes, 80 * kGiB);
  // ZeRO-1: 4 psi + 12 psi / dp + activations <= 80 GiB.
  const double act = fits[1].activation_bytes;
  const int dp = fits[1].smallest_dp;
  ASSERT_GT(dp, 0);
  EXPECT_LE(80e9 + 240e9 / dp + act, 80 * kGiB);
  EXPECT_GT(80e9 + 240e9 / (dp - 1) + act, 80 * kGiB);
}

}  // namespace
}  // namespace fb::model
