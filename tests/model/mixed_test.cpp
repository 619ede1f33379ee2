// Mixed GPU generations (issue 25): the data-parallel step is the slow
// card's, the fast cards wait the difference, and a pipeline split in
// proportion to each model's rate beats the uniform split. Bad mixes exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <nlohmann/json.hpp>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
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
    parse_gpu_mix("a100-80gb:8,r100:8", p, "--gpus");
    FAIL() << "an unknown preset was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("r100"), std::string::npos) << e.what();
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
  for (const Case& c : {Case{"a100-80gb:8,r100:8", "no such GPU preset 'r100'"}, Case{"''", "--gpus is empty"},
                        Case{"a100-80gb:x", "--gpus 'a100-80gb:x'"}, Case{"a100-80gb:8", "the mix has 8 GPUs"}}) {
    const auto bad = test::run_process(step_cmd(c.gpus));
    EXPECT_EQ(bad.exit_code, 2) << c.gpus << "\n" << bad.err;
    EXPECT_NE(bad.err.find(c.expect), std::string::npos) << c.gpus << "\n" << bad.err;
  }
}

// ---- the mix from a record's inventory (model step --gpus-from) ----------

using ojson = nlohmann::ordered_json;

// One inventory line: `models` are the node's GPUs in index order; `rank_gpu`
// the rank's own (-1: none picked, as topo with one rank per node writes).
ojson inventory_json(int rank, const std::string& host, const std::vector<std::string>& models, int rank_gpu) {
  ojson gpus = ojson::array();
  for (std::size_t i = 0; i < models.size(); ++i) gpus.push_back({{"index", i}, {"model", models[i]}});
  ojson j = {{"type", "inventory"}, {"rank", rank}, {"host", host}, {"local_rank", rank_gpu < 0 ? 0 : rank_gpu},
             {"gpus", gpus}};
  if (rank_gpu >= 0) j["rank_gpu"] = rank_gpu;
  return j;
}

const std::vector<std::string> kEightA100(8, "NVIDIA A100-SXM4-80GB"), kEight4090(8, "NVIDIA GeForce RTX 4090");

// Two nodes, one rank per GPU (rank_gpu set) or one per node (the node's GPUs).
std::vector<ojson> two_node_lines(bool rank_per_gpu) {
  std::vector<ojson> lines;
  for (int node = 0; node < 2; ++node)
    for (int local = 0; local < (rank_per_gpu ? 8 : 1); ++local)
      lines.push_back(inventory_json(node * 8 + local, node == 0 ? "gpu01" : "gpu02", node == 0 ? kEightA100 : kEight4090,
                                     rank_per_gpu ? local : -1));
  return lines;
}

Results record_of(const std::vector<ojson>& lines) {
  Results r;
  r.path = "mixed.jsonl";
  for (const ojson& l : lines) r.inventory.push_back(inventory_line(l));
  return r;
}

std::string mix_text(const std::vector<GpuGroup>& mix) {
  std::string out;
  for (const GpuGroup& g : mix) out += (out.empty() ? "" : ",") + g.gpu + ":" + std::to_string(g.count);
  return out;
}

TEST(MixedFromRecord, EachNodesGpusCountOnceWhateverTheRanksPerNode) {
  const Presets& p = builtin_presets();
  EXPECT_EQ(mix_text(gpu_mix_of(record_of(two_node_lines(true)), p, "--gpus-from")), "a100-80gb:8,rtx-4090:8");
  EXPECT_EQ(mix_text(gpu_mix_of(record_of(two_node_lines(false)), p, "--gpus-from")), "a100-80gb:8,rtx-4090:8");
  // A node that two ranks both describe whole is still 8 GPUs; the order is the record's.
  std::vector<ojson> lines = two_node_lines(false);
  std::reverse(lines.begin(), lines.end());
  lines.push_back(inventory_json(16, "gpu02", kEight4090, -1));
  EXPECT_EQ(mix_text(gpu_mix_of(record_of(lines), p, "--gpus-from")), "rtx-4090:8,a100-80gb:8");
  // NVML's names, any case, for every preset.
  for (const GpuPreset& g : p.gpus) {
    ASSERT_FALSE(g.nvml_names.empty()) << g.name << " has no nvml_names";
    std::string shouted = g.nvml_names.front();
    std::transform(shouted.begin(), shouted.end(), shouted.begin(), [](unsigned char c) { return std::toupper(c); });
    EXPECT_EQ(mix_text(gpu_mix_of(record_of({inventory_json(0, "n", {shouted}, -1)}), p, "x")), g.name + ":1");
  }
}

TEST(MixedFromRecord, NoInventoryNoModelOrAnUnknownModelNameTheFileAndTheFix) {
  const Presets& p = builtin_presets();
  const auto message = [&](const std::vector<ojson>& lines) {
    try {
      gpu_mix_of(record_of(lines), p, "--gpus-from");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message({}).find("'mixed.jsonl': no inventory lines"), std::string::npos) << message({});
  const std::string none = message({inventory_json(0, "cpu01", {}, -1)});
  EXPECT_NE(none.find("no inventory line names a GPU model"), std::string::npos) << none;
  EXPECT_NE(none.find("--gpus GPU:COUNT"), std::string::npos) << none;
  const std::string unknown = message({inventory_json(0, "gpu01", {"NVIDIA R100 SXM7"}, -1)});
  EXPECT_NE(unknown.find("'NVIDIA R100 SXM7' (on gpu01)"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("nvml_names"), std::string::npos) << unknown;
}

TEST(MixedStepCli, GpusFromARecordPredictsWhatTheSameMixTypedByHandDoes) {
  const std::string dir = test::make_temp_dir("fb_mixed_");
  const std::string record = dir + "/topo.jsonl";
  {
    std::ifstream h200(std::string(FB_SOURCE_DIR) + "/results/h200-device-check-2026-11-30/nccl.jsonl");
    std::string header;
    std::getline(h200, header);  // a real run header; the inventory below is the mix
    std::ofstream out(record);
    out << header << "\n";
    for (const ojson& l : two_node_lines(true)) out << l.dump() << "\n";
  }
  const std::string base = std::string(FB_BINARY) + " model step -w " + FB_SOURCE_DIR +
                           "/profiles/workloads/llama-7b-zero1-2x8-h100.yaml --network " + kNet + " --format json ";
  const auto typed = test::run_process(base + "--gpus a100-80gb:8,rtx-4090:8");
  const auto found = test::run_process(base + "--gpus-from " + record);
  ASSERT_EQ(found.exit_code, 0) << found.err;
  ASSERT_EQ(typed.exit_code, 0) << typed.err;
  EXPECT_EQ(nlohmann::json::parse(found.out), nlohmann::json::parse(typed.out));
  const auto both = test::run_process(base + "--gpus a100-80gb:16 --gpus-from " + record);
  EXPECT_EQ(both.exit_code, 2) << both.err;
  const auto missing = test::run_process(base + "--gpus-from " + dir + "/absent.jsonl");
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("absent.jsonl"), std::string::npos) << missing.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fb
