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
  ActivationShape a{1, 2048, 4096, 32, 32, 1, 1, 8, 2.0, false, false};
  const double sbh = 2048.0 * 4096;
  // s*b*h*(34 + 5*a*s/h) per layer, 32 layers.
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * sbh * (34 + 5.0 * 32 * 2048 / 4096));
  a.flash_attention = true;
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * sbh * 34);
  a.tp = 8;  // 10 + 24/t
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * sbh * 13);
  a.recompute = true;  // inputs only, plus one layer recomputed
  EXPECT_DOUBLE_EQ(activation_bytes(a), 32 * 2 * sbh + sbh * 13);
  a.recompute = false;
  a.pp = 4;  // 1F1B: p micro-batches in flight on the first stage
  a.layers_per_stage = 8;
  EXPECT_DOUBLE_EQ(activation_bytes(a), 8 * 4 * sbh * 13);
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
