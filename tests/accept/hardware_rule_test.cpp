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
        "  - {kind: hardware, nodes: 2, nic_rate: 400 Gbit/s}\n", "  - {kind: hardware, nvlink_domain: 0}\n",
        "  - {kind: hardware, nvlink_domain: 16, nodes: 4}\n"})
    EXPECT_THROW(profile_with_rules(bad), std::exception) << bad;
}

// GB200 trays as topo records them (schema 1.10): 4 GPUs each, every one's
// NVLink domain and registration state.
json trays_gpus(const std::string& domain, const char* state = "completed") {
  json out = json::array();
  for (int i = 0; i < 4; ++i)
    out.push_back({{"index", i},
                   {"model", "NVIDIA GB200"},
                   {"fabric", {{"state", i == 3 ? state : "completed"}, {"clique_id", 1}, {"domain", domain}}}});
  return out;
}

// Four trays; the last one in `last_domain`, its GPU3 in `last_state`.
Results nvl72_trays(const std::string& last_domain = "rack-a/1", const char* last_state = "completed") {
  RecordBuilder b(4, 4);
  for (int t = 0; t < 3; ++t)
    b.inventory(t, "tray" + std::to_string(t), trays_gpus("rack-a/1"), ib_ports(4), json::array());
  b.inventory(3, "tray3", trays_gpus(last_domain, last_state), ib_ports(4), json::array());
  return b.results();
}

const char* kDomain = "  - {kind: hardware, nvlink_domain: 16}\n";

TEST(HardwareRule, TheNvlinkDomainSoldIsJudgedFromTheFabricInfo) {
  const Verdict sold = test::judge_one(kDomain, nvl72_trays());
  EXPECT_EQ(sold.status, Status::pass) << sold.reason;
  EXPECT_DOUBLE_EQ(*sold.measured, 16);
  EXPECT_TRUE(hw_says(sold.reason,
                      "1 NVLink domain of the run's GPUs; the smallest: 16 GPUs, rack-a/1 on tray0, "
                      "tray1, tray2, tray3"))
      << sold.reason;
  // A tray in another rack's domain: two domains, of 12 and 4.
  const Verdict split = test::judge_one(kDomain, nvl72_trays("rack-b/1"));
  EXPECT_EQ(split.status, Status::fail);
  EXPECT_DOUBLE_EQ(*split.measured, 4);
  EXPECT_TRUE(hw_says(split.reason, "2 NVLink domains")) << split.reason;
  // A GPU still registering is in no domain: alone on the network.
  const Verdict slow = test::judge_one(kDomain, nvl72_trays("rack-a/1", "in_progress"));
  EXPECT_EQ(slow.status, Status::fail);
  EXPECT_DOUBLE_EQ(*slow.measured, 1);
  EXPECT_TRUE(hw_says(slow.reason, "tray3 GPU3 (in_progress) outside any")) << slow.reason;
}

TEST(HardwareRule, ARecordWithoutFabricInfoIsNotJudgedSayingWhy) {
  const Verdict old = test::judge_one(kDomain, sold_cluster());  // GPUs without `fabric` (before 1.10)
  EXPECT_EQ(old.status, Status::skip);
  EXPECT_TRUE(hw_says(old.reason, "no GPU of the record has fabric info")) << old.reason;
  RecordBuilder b(1, 1);
  b.inventory(0, "tray0",
              json::array({{{"index", 0},
                            {"model", "NVIDIA GB200"},
                            {"fabric", nullptr},
                            {"unknown",
                             {{"fabric",
                               "NVML has no fabric info (nvmlDeviceGetGpuFabricInfo is not in "
                               "this driver)"}}}}}),
              ib_ports(4), json::array());
  const Verdict unknown = test::judge_one(kDomain, b.results());
  EXPECT_EQ(unknown.status, Status::skip);
  EXPECT_TRUE(hw_says(unknown.reason, "no GPU's NVLink domain is known: NVML has no fabric info")) << unknown.reason;
}

}  // namespace
}  // namespace fb::accept
