// The field's common claims, as tests on fixed workloads with the stated
// assumptions: 150 TFLOP/s achieved per A100, bf16, nothing overlapped, two
// nodes of 8 A100 (profiles/workloads/ holds the workloads).
#include <gtest/gtest.h>

#include "fabricbench/model/quotes.hpp"
#include "model_workloads.hpp"

namespace fb::model {
namespace {

// ZeRO-3, 10B parameters, 2M tokens per step: more than 40% of the step
// communicating over one 10GbE link per node, under 10% over 8x200G HDR.
TEST(Claims, Zero3On10GbEIsMostlyCommunicationAndOnHdrIsNot) {
  const Workload w = test::profile_workload("zero3-10b-2x8-a100.yaml");
  ASSERT_EQ(w.zero, 3);
  ASSERT_DOUBLE_EQ(w.params, 10e9);
  ASSERT_DOUBLE_EQ(w.tokens_per_step(), 2 * 1024 * 1024);
  ASSERT_DOUBLE_EQ(w.tflops, 150);
  const StepCost ten = test::step_on(w, "1x10gbe");
  const StepCost hdr = test::step_on(w, "8x200g-hdr-ib");
  EXPECT_GT(ten.comm_share, 0.40);
  EXPECT_LT(hdr.comm_share, 0.10);
  for (const auto* s : {&ten, &hdr}) {
    EXPECT_DOUBLE_EQ(s->exposed_us, s->comm_us);  // nothing overlapped
    EXPECT_EQ(s->parallel.gpus, 16);
  }
  // Same compute on both: only the network differs.
  EXPECT_DOUBLE_EQ(ten.compute_us, hdr.compute_us);
  // It fits an 80 GB A100 at ZeRO-3 with recompute, so the claim is about a
  // job that can run.
  EXPECT_LT(ten.memory_bytes, ten.memory_capacity_bytes);
}

// DDP, bf16 gradients, 7B parameters, 1M tokens per step: over 1.5x faster
// on 8x200G HDR per node than on one 10GbE link.
TEST(Claims, DdpIsOverOneAndAHalfTimesFasterOnHdrThanOn10GbE) {
  const Workload w = test::profile_workload("ddp-7b-2x8-a100.yaml");
  ASSERT_EQ(w.zero, 0);
  ASSERT_DOUBLE_EQ(w.grad_bytes, 2);
  ASSERT_DOUBLE_EQ(w.tokens_per_step(), 1024 * 1024);
  const StepCost ten = test::step_on(w, "1x10gbe");
  const StepCost hdr = test::step_on(w, "8x200g-hdr-ib");
  EXPECT_GT(ten.step_us / hdr.step_us, 1.5);
  EXPECT_DOUBLE_EQ(ten.exposed_us, ten.comm_us);
}

// 2000 h on old cards against 1200 h on new cards at 1.5x to 2x the hourly
// price: 0.9x to 1.2x the cost, the same at 5/3x. Exact arithmetic.
TEST(Claims, NewCardsAtAHigherPriceCostAboutTheSame) {
  Quote old_cards;
  old_cards.nodes = 2;
  old_cards.gpus_per_node = 8;
  old_cards.price_per_gpu_hour = 1.2;
  const double old_cost = job_cost(old_cards, 2000);
  EXPECT_DOUBLE_EQ(old_cost, 2000 * 16 * 1.2);
  for (const double ratio : {1.5, 5.0 / 3.0, 2.0}) {
    Quote new_cards = old_cards;
    new_cards.price_per_gpu_hour = old_cards.price_per_gpu_hour * ratio;
    const double new_cost = job_cost(new_cards, 1200);
    EXPECT_NEAR(new_cost / old_cost, 1200 * ratio / 2000, 1e-12);
    EXPECT_GE(new_cost / old_cost, 0.9 - 1e-12);  // "about the same": within -10% / +20%
    EXPECT_LE(new_cost / old_cost, 1.2 + 1e-12);
  }
}

}  // namespace
}  // namespace fb::model
