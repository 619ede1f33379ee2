// The hardware rule on records built in memory: two nodes as an 8 x H100 +
// 8 x 400G IB quote sells them, one node short of a GPU and with a NIC
// trained down to 200G, and a record with no GPU or NIC listed at all.
#include <gtest/gtest.h>

#include "fabricbench/accept/evaluate.hpp"
#include "record_builder.hpp"

namespace fb::accept {
namespace {

using json = nlohmann::ordered_json;
using test::profile_with_rules;
using test::RecordBuilder;

bool hw_says(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

json h100s(int n) {
  json out = json::array();
  for (int i = 0; i < n; ++i) out.push_back({{"index", i}, {"model", "NVIDIA H100 80GB HBM3"}});
  return out;
}

json ib_ports(int n, double slow_rate = 400) {
  json out = json::array();
  for (int i = 0; i < n; ++i)
    out.push_back(
        {{"name", "mlx5_" + std::to_string(i)}, {"kind", "IB"}, {"up", true}, {"rate_gbit", i == 0 ? slow_rate : 400}});
  out.push_back({{"name", "eth0"}, {"kind", "Ethernet"}, {"up", true}, {"rate_gbit", 25}});
  return out;
}

// Two nodes; node2 has `gpus2` GPUs and its first NIC runs at `slow_rate`.
Results sold_cluster(int gpus2 = 8, double slow_rate = 400) {
  RecordBuilder b(2, 2);
  b.inventory(0, "node1", h100s(8), ib_ports(8), json::array());
  b.inventory(1, "node2", h100s(gpus2), ib_ports(8, slow_rate), json::array());
  return b.results();
}

const char* kGpu = "  - {kind: hardware, gpu: [nvidia h100 80gb hbm3]}\n";
const char* kGpus = "  - {kind: hardware, gpus_per_node: 8}\n";
const char* kNics = "  - {kind: hardware, nics_per_node: 8, nic_rate: 400 Gbit/s, nic_kind: [IB]}\n";
const char* kNodes = "  - {kind: hardware, nodes: 2}\n";

TEST(HardwareRule, WhatWasSoldPasses) {
  for (const char* rule : {kGpu, kGpus, kNics, kNodes}) {
    const Verdict v = test::judge_one(rule, sold_cluster());
    EXPECT_EQ(v.status, Status::pass) << rule << v.reason;
  }
}

TEST(HardwareRule, EachBrokenPromiseFailsNamingTheNode) {
  const Verdict gpu = test::judge_one("  - {kind: hardware, gpu: [NVIDIA H200]}\n", sold_cluster());
  EXPECT_EQ(gpu.status, Status::fail);
  EXPECT_DOUBLE_EQ(*gpu.measured, 16);
  EXPECT_TRUE(hw_says(gpu.reason, "NVIDIA H100 80GB HBM3 on node1")) << gpu.reason;

  const Verdict count = test::judge_one(kGpus, sold_cluster(7));
  EXPECT_EQ(count.status, Status::fail);
  EXPECT_DOUBLE_EQ(*count.measured, 7);
  EXPECT_TRUE(hw_says(count.reason, "7 on node2")) << count.reason;

  // A NIC trained down to 200G is not one of the 8 x 400G sold; the 25G
  // Ethernet port does not make up for it.
  const Verdict slow = test::judge_one(kNics, sold_cluster(8, 200));
  EXPECT_EQ(slow.status, Status::fail);
  EXPECT_DOUBLE_EQ(*slow.measured, 7);
  EXPECT_TRUE(hw_says(slow.reason, "IB NICs up at >= 400 Gbit/s on a node: 7 on node2")) << slow.reason;

  const Verdict nodes = test::judge_one("  - {kind: hardware, nodes: 4}\n", sold_cluster());
  EXPECT_EQ(nodes.status, Status::fail);
  EXPECT_DOUBLE_EQ(*nodes.measured, 2);
}

TEST(HardwareRule, NothingListedIsNotJudged) {
  RecordBuilder bare(2, 1);
  bare.inventory(0, "node1", json::array(), json::array(), json::array());
  const Verdict gpu = test::judge_one(kGpu, bare.results());
  EXPECT_EQ(gpu.status, Status::skip);
  EXPECT_TRUE(hw_says(gpu.reason, "no inventory line names a GPU")) << gpu.reason;
  EXPECT_EQ(test::judge_one(kNics, RecordBuilder(2, 1).results()).status, Status::skip);
}

TEST(HardwareRule, OnePromiseEachWithItsUnits) {
  for (const char* bad :
       {"  - {kind: hardware}\n", "  - {kind: hardware, gpus_per_node: 8, nodes: 2}\n",
        "  - {kind: hardware, nics_per_node: 8}\n", "  - {kind: hardware, nics_per_node: 8, nic_rate: 400}\n",
        "  - {kind: hardware, nics_per_node: 8, nic_rate: 400 Gbit/s, nic_kind: [Infiniband]}\n",
        "  - {kind: hardware, nodes: 2, nic_rate: 400 Gbit/s}\n"})
    EXPECT_THROW(profile_with_rules(bad), std::exception) << bad;
}

}  // namespace
}  // namespace fb::accept
