// The products one transformer layer runs on one GPU (issue 38), from the
// workloads the project ships.
#include "fabricbench/model/gemm_shapes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <tuple>

#include "fabricbench/core/errors.hpp"
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
