// The transport rule on records built in memory: NCCL rows on the network
// (path NET/IB or NET/Socket) against the inventory's NICs. NCCL rows on a
// network cannot be produced on a machine without GPUs, hence built here.
#include <gtest/gtest.h>

#include "fabricbench/accept/evaluate.hpp"
#include "record_builder.hpp"

namespace fb::accept {
namespace {

using json = nlohmann::ordered_json;
using test::profile_with_rules;
using test::RecordBuilder;

Verdict judge(const std::string& rule_yaml, const Results& run) { return test::judge_one(rule_yaml, run); }

json nic(const std::string& name, const std::string& kind, bool up) {
  return {{"name", name}, {"kind", kind}, {"state", up ? "up" : "down"}, {"up", up}};
}

// Two nodes of one rank each: an inter all_reduce at 1 MiB and 1 GiB on `path`, each node with `nics`.
Results two_nodes(const std::string& path, const json& nics) {
  RecordBuilder b(2, 2);
  for (std::uint64_t bytes : {1u << 20, 1u << 30}) b.row("all_reduce", "inter", bytes, 20).path = path;
  b.row("all_reduce", "intra", 1u << 20, 200).path = "P2P/NVLink";
  b.inventory(0, "node1", json::array(), nics, json::array());
  b.inventory(1, "node2", json::array(), nics, json::array());
  return b.results();
}

const json kIbAndEthernet = json::array({nic("eth0", "Ethernet", true), nic("mlx5_0", "IB", true)});

TEST(Transport, SocketRowsWhereRdmaNicsAreUpFailNamingTheNodesAndTheFix) {
  const Verdict v = judge("  - {kind: transport}\n", two_nodes("NCCL 2.28.3 NET/Socket", kIbAndEthernet));
  EXPECT_EQ(v.status, Status::fail) << v.reason;
  EXPECT_EQ(v.measured, 2) << "both network rows";
  EXPECT_NE(v.reason.find("NCCL fell back to sockets"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("node1 (mlx5_0 (IB))"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("IPC_LOCK"), std::string::npos) << v.reason;
  ASSERT_EQ(v.offenders.size(), 2u);
  EXPECT_EQ(v.offenders[0].host, "node1");
  EXPECT_EQ(v.offenders[1].host, "node2");
}

TEST(Transport, RdmaRowsPass) {
  const Verdict v = judge("  - {kind: transport}\n", two_nodes("NCCL 2.28.3 NET/IB/GDRDMA", kIbAndEthernet));
  EXPECT_EQ(v.status, Status::pass) << v.reason;
  EXPECT_EQ(v.measured, 0);
  EXPECT_TRUE(v.offenders.empty());
}

TEST(Transport, SocketsWhereNoRdmaNicIsUpPass) {
  // Ethernet only, or an IB port that is down: sockets are what the cluster has.
  for (const json& nics : {json::array({nic("eth0", "Ethernet", true)}),
                           json::array({nic("eth0", "Ethernet", true), nic("mlx5_0", "IB", false)})}) {
    const Verdict v = judge("  - {kind: transport}\n", two_nodes("NCCL 2.28.3 NET/Socket", nics));
    EXPECT_EQ(v.status, Status::pass) << v.reason;
    EXPECT_NE(v.reason.find("no node has an RDMA NIC up"), std::string::npos) << v.reason;
  }
}

// AWS: EFA devices are RDMA NICs (topo names them by their driver), and
// NCCL reaches them through the aws-ofi-nccl plugin (NET/AWS Libfabric).
TEST(Transport, SocketRowsWhereEfaIsUpFailAndLibfabricRowsPass) {
  const json efa = json::array({nic("ens5", "Ethernet", true), nic("rdmap36s0:1", "EFA", true)});
  const Verdict sockets = judge("  - {kind: transport}\n", two_nodes("NCCL 2.28.3 NET/Socket", efa));
  EXPECT_EQ(sockets.status, Status::fail) << sockets.reason;
  EXPECT_NE(sockets.reason.find("node1 (rdmap36s0:1 (EFA))"), std::string::npos) << sockets.reason;
  EXPECT_NE(sockets.reason.find("FI_PROVIDER=efa"), std::string::npos) << sockets.reason;
  const Verdict plugin = judge("  - {kind: transport}\n", two_nodes("NCCL 2.28.3 NET/AWS Libfabric/0/GDRDMA", efa));
  EXPECT_EQ(plugin.status, Status::pass) << plugin.reason;
}

TEST(Transport, ARowFilterNarrowsTheRowsJudged) {
  // Only the intra row (NVLink) is left: nothing crossed the network, so the rule cannot be judged.
  const Verdict v = judge("  - {kind: transport, scope: intra, optional: true}\n",
                          two_nodes("NCCL 2.28.3 NET/Socket", kIbAndEthernet));
  EXPECT_EQ(v.status, Status::skip) << v.reason;
  EXPECT_NE(v.reason.find("no row crossed the network"), std::string::npos) << v.reason;
}

TEST(Transport, WithoutAnInventoryItIsNotJudged) {
  RecordBuilder b(2, 2);
  b.row("all_reduce", "inter", 1u << 20, 20).path = "NCCL 2.28.3 NET/Socket";
  const Verdict v = judge("  - {kind: transport, optional: true}\n", b.results());
  EXPECT_EQ(v.status, Status::skip) << v.reason;
  EXPECT_FALSE(v.judged);
}

TEST(Transport, UnknownKeysAreRefused) {
  EXPECT_THROW(profile_with_rules("  - {kind: transport, max: 0}\n"), std::exception);
}

}  // namespace
}  // namespace fb::accept
