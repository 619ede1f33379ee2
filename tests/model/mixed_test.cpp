// Mixed GPU generations (issue 25): the data-parallel step is the slow
// card's, the fast cards wait the difference, and a pipeline split in
// proportion to each model's rate beats the uniform split. Bad mixes exit 2.
#include <gtest/gtest.h>

#include <numeric>
#include <nlohmann/json.hpp>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/mixed.hpp"
#include "model_workloads.hpp"
#include "process.hpp"

namespace fb {
namespace {

using namespace fb::model;

const char* kNet = "8x400g-ndr-ib";

// 2 x 8 GPUs, 32 layers, MFU 40%: a100-80gb (312 TFLOP/s bf16) against
// rtx-4090 (165), so the 4090s are the slow ones.
Workload mixed_workload() { return test::profile_workload("llama-7b-zero1-2x8-h100.yaml"); }

MixedStep predict(const std::string& mix) {
  const Workload w = mixed_workload();
  return predict_mixed(w, parse_gpu_mix(mix, builtin_presets(), "--gpus"), test::preset_fabric(w, kNet),
                       builtin_presets());
}

StepCost uniform_on(const std::string& gpu) {
  Workload w = mixed_workload();
  const Fabric fabric = test::preset_fabric(w, kNet);  // the workload's node, as predict_mixed uses
  w.cluster.gpu = gpu;
  return predict_step(w, fabric, builtin_presets());
}

TEST(MixedStep, DataParallelStepIsTheSlowCardsAndTheFastOnesWaitTheDifference) {
  const MixedStep m = predict("a100-80gb:8,rtx-4090:8");
  const StepCost fast = uniform_on("a100-80gb"), slow = uniform_on("rtx-4090");
  ASSERT_GT(slow.compute_us, 1.5 * fast.compute_us);  // the two presets' rates differ
  EXPECT_EQ(m.groups.at(m.slowest).group.gpu, "rtx-4090");
  EXPECT_DOUBLE_EQ(m.dp_step_us, slow.step_us);
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_NEAR(m.groups[0].wait_us, slow.compute_us - fast.compute_us, 1e-6 * slow.compute_us);  // pp 1: no bubble
  EXPECT_DOUBLE_EQ(m.groups[1].wait_us, 0.0);
  EXPECT_NEAR(m.groups[0].wait_share, (slow.compute_us - fast.compute_us) / slow.step_us, 1e-9);
  // The order of the mix changes nothing in the data-parallel answer.
  const MixedStep swapped = predict("rtx-4090:8,a100-80gb:8");
  EXPECT_DOUBLE_EQ(swapped.dp_step_us, m.dp_step_us);
  EXPECT_EQ(swapped.groups.at(swapped.slowest).group.gpu, "rtx-4090");
}

TEST(MixedStep, ProportionalSplitPutsMoreLayersOnTheFastCardAndBeatsTheUniformSplit) {
  const MixedStep m = predict("a100-80gb:8,rtx-4090:8");
  ASSERT_TRUE(m.has_pipeline) << m.no_pipeline;
  EXPECT_EQ(m.uniform.layers, (std::vector<int>{16, 16}));
  ASSERT_EQ(m.proportional.layers.size(), 2u);
  EXPECT_EQ(m.proportional.layers[0] + m.proportional.layers[1], 32);
  EXPECT_GT(m.proportional.layers[0], m.proportional.layers[1]);
  EXPECT_LT(m.proportional.step_us, m.uniform.step_us);
  // Uniform: the 4090 stage sets the pace, 16 of 32 layers on half the GPUs.
  const StepCost slow = uniform_on("rtx-4090");
  EXPECT_NEAR(m.uniform.stage_us[1], slow.compute_us, 1e-6 * slow.compute_us);
  EXPECT_NEAR(m.uniform.step_us, slow.compute_us * (1 + 1.0 / m.micro_batches), 1e-6 * slow.compute_us);
}

TEST(MixedStep, LayersSplitInProportionWithAtLeastOneEach) {
  EXPECT_EQ(proportional_layers(32, {2, 1}), (std::vector<int>{21, 11}));
  EXPECT_EQ(proportional_layers(3, {100, 1, 1}), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(proportional_layers(10, {1, 1, 1, 1}), (std::vector<int>{3, 3, 2, 2}));
  EXPECT_EQ(even_layers(10, 4), (std::vector<int>{3, 3, 2, 2}));
}

TEST(MixedStep, BadMixesNameTheInput) {
  const Presets& p = builtin_presets();
  EXPECT_THROW(parse_gpu_mix("", p, "--gpus"), UsageError);
  EXPECT_THROW(parse_gpu_mix("a100-80gb:8,", p, "--gpus"), UsageError);
  EXPECT_THROW(parse_gpu_mix("a100-80gb", p, "--gpus"), UsageError);
  EXPECT_THROW(parse_gpu_mix("a100-80gb:0", p, "--gpus"), UsageError);
  EXPECT_THROW(predict("a100-80gb:8"), UsageError);  // 8 of the workload's 16 GPUs
  try {
    parse_gpu_mix("a100-80gb:8,b300:8", p, "--gpus");
    FAIL() << "an unknown preset was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("b300"), std::string::npos) << e.what();
  }
}

std::string step_cmd(const std::string& gpus) {
  return std::string(FB_BINARY) + " model step -w " + FB_SOURCE_DIR +
         "/profiles/workloads/llama-7b-zero1-2x8-h100.yaml --network " + kNet + " --gpus " + gpus;
}

TEST(MixedStepCli, PrintsTheWaitAndBothSplitsAndExitsTwoOnBadMixes) {
  const auto r = test::run_process(step_cmd("a100-80gb:8,rtx-4090:8 --format json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["type"], "mixed_step");
  EXPECT_EQ(j["slowest_gpu"], "rtx-4090");
  EXPECT_GT(j["groups"][0]["wait_us"].get<double>(), 0.0);
  EXPECT_LT(j["pipeline"]["proportional"]["step_us"].get<double>(), j["pipeline"]["uniform"]["step_us"].get<double>());
  const auto text = test::run_process(step_cmd("a100-80gb:8,rtx-4090:8"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("data parallel: step"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("proportional to GPUs x rate split (21/11)"), std::string::npos) << text.out;
  struct Case {
    std::string gpus, expect;
  };
  for (const Case& c : {Case{"a100-80gb:8,b300:8", "no such GPU preset 'b300'"}, Case{"''", "--gpus is empty"},
                        Case{"a100-80gb:x", "--gpus 'a100-80gb:x'"}, Case{"a100-80gb:8", "the mix has 8 GPUs"}}) {
    const auto bad = test::run_process(step_cmd(c.gpus));
    EXPECT_EQ(bad.exit_code, 2) << c.gpus << "\n" << bad.err;
    EXPECT_NE(bad.err.find(c.expect), std::string::npos) << c.gpus << "\n" << bad.err;
  }
}

}  // namespace
}  // namespace fb
