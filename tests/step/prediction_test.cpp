// The model's prediction beside a measured step (step/prediction.hpp): the
// second prediction runs at the measured compute, the step difference has
// the sign of predicted minus measured, and the calibration factor rewrites
// a workload into one the model prices at the measured compute.
#include "fabricbench/step/prediction.hpp"

#include <gtest/gtest.h>

#include "fabricbench/model/calibrate.hpp"
#include "fabricbench/model/step.hpp"
#include "fabricbench/step/from_model.hpp"

namespace fb::step {
namespace {

// One node of 8 H200 (no network between nodes: "" is allowed), its compute
// stated as `compute`.
std::string workload_yaml(const std::string& compute) {
  const std::string cluster = "cluster: {gpu: h200-sxm, nodes: 1, gpus_per_node: 8}\n";
  return "model: {params: 1B, layers: 16, hidden: 2048, heads: 16, seq_len: 2048}\n"
         "training: {global_batch: 16, micro_batch: 1}\n"
         "compute: " +
         compute + "\n" + cluster;
}

// Every mode's median: compute alone, communication alone, the overlapped
// step; the compute all products unless `non_gemm_us` of it is not.
StepReport measured(double compute_us, double comm_us, double step_us, double non_gemm_us = 0) {
  StepReport r;
  r.parts.products_us = compute_us - non_gemm_us;
  r.parts.non_gemm_us = non_gemm_us;
  for (Mode m : {Mode::compute_only, Mode::comm_only, Mode::serial, Mode::overlapped}) {
    ModeTimes t;
    t.mode = m;
    r.modes.push_back(t);
  }
  r.modes[0].step.median_us = compute_us;
  r.modes[1].step.median_us = comm_us;
  r.modes[2].step.median_us = compute_us + comm_us;
  r.modes[3].step.median_us = step_us;
  return r;
}

double stated_compute_us(const model::Workload& w) {
  const model::Presets presets = model::builtin_presets();
  return model::predict_step(w, model::fabric_for(w, "", presets), presets).compute_us;
}

class MeasuredCompute : public ::testing::TestWithParam<const char*> {};

// Measured 3x slower than stated: the second prediction's compute is the
// measured one, whichever form the workload states its rate in.
TEST_P(MeasuredCompute, TheSecondPredictionComputesAsLongAsMeasured) {
  const model::Workload w = model::parse_workload(workload_yaml(GetParam()));
  const double stated = stated_compute_us(w);
  ASSERT_GT(stated, 0);
  const StepReport r = measured(3 * stated, 0.5 * stated, 3.2 * stated);
  const auto p = predictions_for(w, r, model::builtin_presets(), "", "");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].basis, "workload rate");
  EXPECT_NEAR(p[0].compute_us, stated, 1e-9 * stated);
  EXPECT_EQ(p[1].basis, "measured compute");
  EXPECT_NEAR(p[1].compute_us, r.compute_us(), 1e-9 * r.compute_us());
  EXPECT_NEAR(p[1].step_us, p[1].compute_us + p[1].non_gemm_us + p[1].exposed_us, 1e-9 * p[1].step_us);
}

// A curve prices the products alone, and the model the non-GEMM work beside
// them: both predictions' steps hold it, like the measured step that ran it,
// and the measured rate is the products' alone (memory-bound work does not
// run at a compute rate).
TEST(Prediction, TheModelsStepHoldsTheNonGemmWorkAsTheMeasuredOneDoes) {
  const model::Workload w =
      model::parse_workload(workload_yaml("{gemm_curve: [[2048, 400], [8192, 800]], of_gemm: 0.5}"));
  const model::Presets presets = model::builtin_presets();
  const model::StepCost cost = model::predict_step(w, model::fabric_for(w, "", presets), presets);
  ASSERT_GT(cost.non_gemm_us, cost.optimizer_us);
  ASSERT_GT(cost.optimizer_us, 0);
  const double non_gemm = cost.non_gemm_us;
  const StepReport r = measured(2 * cost.compute_us + non_gemm, cost.comm_us, 3 * cost.compute_us + non_gemm, non_gemm);
  const auto p = predictions_for(w, r, presets, "", "");
  ASSERT_EQ(p.size(), 2u);
  for (const Prediction& one : p) {
    SCOPED_TRACE(one.basis);
    EXPECT_DOUBLE_EQ(one.non_gemm_us, cost.non_gemm_us);
    EXPECT_DOUBLE_EQ(one.optimizer_us, cost.optimizer_us);
    EXPECT_NEAR(one.step_us, one.compute_us + one.non_gemm_us + one.exposed_us, 1e-9 * one.step_us);
    EXPECT_NEAR(one.efficiency, (one.compute_us + one.non_gemm_us) / one.step_us, 1e-12);
  }
  EXPECT_NEAR(p[0].compute_us, cost.compute_us, 1e-9 * cost.compute_us);
  EXPECT_NEAR(p[1].compute_us, r.parts.products_us, 1e-9 * r.parts.products_us);
}

INSTANTIATE_TEST_SUITE_P(EveryRateForm, MeasuredCompute,
                         ::testing::Values("{tflops: 300}", "{mfu: 40%}",
                                           "{gemm_curve: [[2048, 400], [8192, 800]], of_gemm: 0.5}"));

// Predicted faster than a slow measured step: below it (negative); against
// a measured step shorter than any predicted compute: above it (positive).
TEST(Prediction, StepDifferenceIsPredictedMinusMeasured) {
  const model::Workload w = model::parse_workload(workload_yaml("{tflops: 300}"));
  const double stated = stated_compute_us(w);
  const auto slow = predictions_for(w, measured(stated, stated, 10 * stated), model::builtin_presets(), "", "");
  EXPECT_LT(slow[0].step_diff_pct, -50);
  EXPECT_GT(slow[0].step_diff_pct, -100);
  const StepReport quick = measured(stated, stated, 0.25 * stated);
  const auto fast = predictions_for(w, quick, model::builtin_presets(), "", "");
  EXPECT_GT(fast[0].step_diff_pct, 299);  // the predicted step is at least its compute: 4x the measured step
  EXPECT_NEAR(fast[1].step_diff_pct, 100.0 * (fast[1].step_us / quick.step_us() - 1), 1e-9);
}

TEST(Prediction, CalibrationFactorIsPlannedOverMeasuredCompute) {
  StepSchedule planned;
  planned.compute_us = 300;
  EXPECT_DOUBLE_EQ(calibration_factor(planned, measured(600, 10, 610)), 0.5);
  EXPECT_DOUBLE_EQ(calibration_factor(planned, measured(150, 10, 160)), 2.0);
  // The non-GEMM work the compute_only step also ran is not the products' rate.
  EXPECT_DOUBLE_EQ(calibration_factor(planned, measured(700, 10, 710, 100)), 0.5);
}

// The calibrated workload (`--calibrated-workload`) is priced at the measured compute.
TEST(Prediction, ACalibratedWorkloadPredictsTheMeasuredCompute) {
  const std::string yaml = workload_yaml("{tflops: 300}");
  const model::Workload w = model::parse_workload(yaml);
  StepSchedule planned;
  planned.compute_us = stated_compute_us(w);
  const StepReport r = measured(1.7 * planned.compute_us, 10, 2 * planned.compute_us);
  const model::Workload calibrated =
      model::parse_workload(model::calibrated_workload_yaml(yaml, calibration_factor(planned, r)));
  EXPECT_NEAR(stated_compute_us(calibrated), r.compute_us(), 1e-6 * r.compute_us());
}

// On a GPU whose preset has an attention curve (the H100's), the products
// hold attention's kernel at that curve's time, which the GEMM rate a
// calibration scales does not move: the calibrated workload, and the
// prediction at the measured compute, still take the measured time.
TEST(Prediction, ACalibrationKeepsAttentionAtItsOwnCurveAndStillGivesTheMeasuredCompute) {
  const std::string yaml =
      "model: {params: 1B, layers: 16, hidden: 2048, heads: 16, seq_len: 4096}\n"
      "training: {global_batch: 16, micro_batch: 1}\n"
      "compute: {gemm_curve: preset, of_gemm: 0.6}\n"
      "cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n";
  const model::Workload w = model::parse_workload(yaml);
  const model::Presets presets = model::builtin_presets();
  const StepSchedule planned = schedule_from(model::predict_step(w, model::fabric_for(w, "", presets), presets));
  ASSERT_GT(planned.attention_us, 0.05 * planned.compute_us) << "the H100's attention curve prices a share of it";
  for (const double slower : {1.7, 0.8}) {
    SCOPED_TRACE(slower);
    const StepReport r = measured(slower * planned.compute_us, 10, 2 * planned.compute_us);
    const model::Workload calibrated =
        model::parse_workload(model::calibrated_workload_yaml(yaml, calibration_factor(planned, r)));
    EXPECT_NEAR(stated_compute_us(calibrated), r.compute_us(), 1e-6 * r.compute_us());
    const auto p = predictions_for(w, r, presets, "", "");
    ASSERT_EQ(p.size(), 2u);
    EXPECT_NEAR(p[1].compute_us, r.parts.products_us, 1e-6 * r.parts.products_us);
    EXPECT_NEAR(p[1].attention_us, planned.attention_us, 1e-9 * planned.attention_us) << "its own curve's time";
  }
}

}  // namespace
}  // namespace fb::step
