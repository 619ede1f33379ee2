// `fabricbench step --calibrated-workload`'s rewrite: the rate the workload
// states, in each of its three forms, scaled; the rest kept; a comment says so.
#include "fabricbench/model/calibrate.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "fabricbench/model/workload.hpp"

namespace fb::model {
namespace {

const char* kModel =
    "model: {params: 1B, layers: 16, hidden: 2048, heads: 16, seq_len: 2048}\n"
    "training: {global_batch: 16, micro_batch: 1}\n"
    "cluster: {gpu: h200-sxm, nodes: 1, gpus_per_node: 8}\n";

Workload calibrated(const std::string& compute, double factor) {
  return parse_workload(calibrated_workload_yaml(std::string(kModel) + "compute: " + compute + "\n", factor));
}

TEST(CalibratedWorkload, TflopsIsScaled) {
  const Workload w = calibrated("{tflops: 300}", 0.5);
  EXPECT_DOUBLE_EQ(w.tflops, 150);
  EXPECT_EQ(w.hidden, 2048);  // the rest of the workload is kept
  EXPECT_EQ(w.cluster.gpus_per_node, 8);
}

TEST(CalibratedWorkload, MfuIsScaledInBothForms) {
  EXPECT_DOUBLE_EQ(calibrated("{mfu: 0.4}", 0.5).mfu, 0.2);
  EXPECT_DOUBLE_EQ(calibrated("{mfu: 40%}", 0.5).mfu, 0.2);  // the percentage comes back as a fraction
  EXPECT_DOUBLE_EQ(calibrated("{mfu: 40%}", 1.5).mfu, 0.6);
}

// A GEMM curve is measured hardware: the share of it the step reaches is what moves.
TEST(CalibratedWorkload, OfGemmIsScaledAndTheCurveKept) {
  const Workload w = calibrated("{gemm_curve: [[2048, 400], [8192, 800]], of_gemm: 50%}", 0.8);
  EXPECT_DOUBLE_EQ(w.gemm.of_gemm, 0.4);
  ASSERT_EQ(w.gemm.points.size(), 2u);
  EXPECT_DOUBLE_EQ(w.gemm.points[1].second, 800);
}

TEST(CalibratedWorkload, ACommentLineSaysWhatWasScaled) {
  const std::string text = calibrated_workload_yaml(std::string(kModel) + "compute: {tflops: 100}\n", 0.25);
  const std::string first = text.substr(0, text.find('\n'));
  EXPECT_EQ(first, "# Calibrated by `fabricbench step`: compute rate scaled by 0.25 to the measured step.");
  EXPECT_DOUBLE_EQ(YAML::Load(text)["compute"]["tflops"].as<double>(), 25);
}

}  // namespace
}  // namespace fb::model
