// The schedule `step` runs, built from the model's step (step/from_model.hpp):
// it carries the model's non-GEMM work, the layers' part inside the compute
// stretches and the optimizer after the last collective, and the overlap
// windows are parts of the stretches that hold that work.
#include "fabricbench/step/from_model.hpp"

#include <gtest/gtest.h>

#include "fabricbench/model/step.hpp"

namespace fb::step {
namespace {

// One node of 8 H200 (a memory bandwidth in its preset) with its products
// priced from a GEMM curve: the model prices the non-GEMM work beside them.
model::StepCost curve_step() {
  const model::Workload w = model::parse_workload(
      "model: {params: 1B, layers: 16, hidden: 2048, heads: 16, seq_len: 2048}\n"
      "training: {global_batch: 16, micro_batch: 1}\n"
      "parallel: {bucket: 25M}\n"
      "overlap: {grad_reduce: 0.8}\n"
      "compute: {gemm_curve: [[2048, 400], [8192, 800]], of_gemm: 0.5}\n"
      "cluster: {gpu: h200-sxm, nodes: 1, gpus_per_node: 8}\n");
  const model::Presets presets = model::builtin_presets();
  return model::predict_step(w, model::fabric_for(w, "", presets), presets);
}

TEST(ScheduleFromModel, CarriesTheNonGemmWorkAndTheOptimizerApart) {
  const model::StepCost cost = curve_step();
  ASSERT_GT(cost.non_gemm_us, cost.optimizer_us);
  ASSERT_GT(cost.optimizer_us, 0);
  const StepSchedule s = schedule_from(cost);
  EXPECT_DOUBLE_EQ(s.compute_us, cost.compute_us);
  EXPECT_DOUBLE_EQ(s.non_gemm_us, cost.non_gemm_us);
  EXPECT_DOUBLE_EQ(s.optimizer_us, cost.optimizer_us);
  EXPECT_DOUBLE_EQ(s.layers_us(), cost.compute_us + cost.non_gemm_us - cost.optimizer_us);
}

// The model's windows are parts of a stage's passes, non-GEMM work included:
// the same microseconds of window are the same fraction of what runs.
TEST(ScheduleFromModel, WindowsArePartsOfTheStretchesWithTheirNonGemmWork) {
  const model::StepCost cost = curve_step();
  const StepSchedule s = schedule_from(cost);
  ASSERT_EQ(s.comms.size(), cost.items.size());
  bool windowed = false;
  for (std::size_t i = 0; i < s.comms.size(); ++i) {
    if (cost.items[i].window_us <= 0) continue;
    windowed = true;
    EXPECT_NEAR(s.comms[i].window * s.layers_us(), std::min(cost.items[i].window_us, s.layers_us()),
                1e-9 * s.layers_us())
        << s.comms[i].name;
  }
  EXPECT_TRUE(windowed) << "the step has no windowed collective: the test proves nothing";
}

// A rate that is a whole step's holds the non-GEMM work already: none is added.
TEST(ScheduleFromModel, AWholeStepsRateAddsNoNonGemmWork) {
  const model::Workload w = model::parse_workload(
      "model: {params: 1B, layers: 16, hidden: 2048, heads: 16, seq_len: 2048}\n"
      "training: {global_batch: 16, micro_batch: 1}\n"
      "compute: {mfu: 40%}\n"
      "cluster: {gpu: h200-sxm, nodes: 1, gpus_per_node: 8}\n");
  const model::Presets presets = model::builtin_presets();
  const StepSchedule s = schedule_from(model::predict_step(w, model::fabric_for(w, "", presets), presets));
  EXPECT_EQ(s.non_gemm_us, 0);
  EXPECT_EQ(s.optimizer_us, 0);
  EXPECT_DOUBLE_EQ(s.layers_us(), s.compute_us);
}

}  // namespace
}  // namespace fb::step
