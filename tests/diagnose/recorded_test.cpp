// Verdicts on sample series recorded by `fabricbench diagnose --samples-out`
// on real machines (tests/diagnose/fixtures, each with how it was made in
// fixtures/README.md): the series read back and judged as they were live.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "fabricbench/diagnose/report.hpp"

namespace fb::diagnose {
namespace {

using json = nlohmann::ordered_json;

std::vector<NodeSamples> recorded(const std::string& name) {
  std::ifstream in(std::string(FB_DIAGNOSE_FIXTURES) + "/" + name);
  EXPECT_TRUE(in) << name;
  const json j = json::parse(in);
  std::vector<NodeSamples> out;
  for (const auto& n : j.at("nodes")) out.push_back(node_samples_from_json(n));
  return out;
}

const Thresholds kRecordedThresholds;

// The CPU-only test machine: no NVML; its one virtio NIC reports no speed.
TEST(Recorded, NoNvmlMachineSaysWhyEveryGpuFigureIsUnknown) {
  const auto nodes = recorded("cpu-vm-no-nvml.json");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_TRUE(nodes[0].gpus.empty());
  EXPECT_NE(nodes[0].gpu_reason.find("NVML not loaded"), std::string::npos) << nodes[0].gpu_reason;
  const auto lines = diagnose(nodes[0], kRecordedThresholds);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].verdict, "undetermined");
  ASSERT_TRUE(lines[0].node_figures);
  EXPECT_FALSE(lines[0].node_figures->nic_busy_pct);  // the speed is unknown ...
  EXPECT_TRUE(lines[0].node_figures->nic_tx_gbps);    // ... the counters are not
}

// A series written and read back is the same series: the same verdicts.
TEST(Recorded, ASeriesReadsBackAsItWasWritten) {
  for (const auto& node : recorded("cpu-vm-no-nvml.json")) {
    const NodeSamples again = node_samples_from_json(to_json(node));
    EXPECT_EQ(to_json(again), to_json(node));
  }
}

TEST(Recorded, AMalformedSeriesIsAnErrorNamingWhat) {
  json bad = to_json(recorded("cpu-vm-no-nvml.json").at(0));
  bad["nics"] = "eth0";
  EXPECT_THROW(node_samples_from_json(bad), std::runtime_error);
  bad = json{{"gpus", json::array({json{{"info", json{{"index", 0}}}, {"samples", json::array({json{{"t_s", 0}, {"sm_util_pct", "busy"}}})}}})}};
  try {
    (void)node_samples_from_json(bad);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'sm_util_pct' has the wrong type"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fb::diagnose
