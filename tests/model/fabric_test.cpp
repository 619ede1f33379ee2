// Presets (built in, with sources) and measured links: network specs, the
// measured curve inside the sweep, derived parameters for other shapes, and
// the messages for files that lack what the model needs.
#include "fabricbench/model/fabric.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/collective.hpp"
#include "fabricbench/model/formulas.hpp"
#include "fabricbench/model/step.hpp"
#include "model_workloads.hpp"
#include "model_rows.hpp"
#include "process.hpp"

namespace fb::model {
namespace {

TEST(Presets, EveryEntryHasItsFiguresAndSource) {
  const Presets& p = builtin_presets();
  EXPECT_EQ(p.networks.size(), 14u);
  EXPECT_EQ(p.nodes.size(), 10u);
  EXPECT_EQ(p.gpus.size(), 15u);
  for (const auto& n : p.networks) EXPECT_FALSE(n.source.empty()) << n.name;
  for (const auto& n : p.nodes) EXPECT_FALSE(n.source.empty()) << n.name;
  for (const auto& g : p.gpus) {
    EXPECT_FALSE(g.source.empty()) << g.name;
    EXPECT_NO_THROW(p.node(g.node, g.name)) << g.name;  // every GPU names a known node
  }
  EXPECT_DOUBLE_EQ(p.network("10gbe", "t").line_gbps, 1.25);
  EXPECT_DOUBLE_EQ(p.network("400g-ndr-ib", "t").line_gbps, 50);
  EXPECT_DOUBLE_EQ(p.gpu("h100-sxm", "t").bf16_tflops, 989);
  EXPECT_DOUBLE_EQ(p.node("nvlink4-8", "t").line_gbps, 450);
  EXPECT_DOUBLE_EQ(p.node("nvlink4-8", "t").nvls_gbps, 476);
  EXPECT_EQ(p.node("nvlink3-8", "t").nvls_gbps, 0);  // no NVLS on A100's NVSwitch
  // 400G RoCE (Spectrum-X) and 4-GPU PCIe nodes, each with its source.
  EXPECT_EQ(p.network("400g-roce", "t").transport, Transport::rdma);
  EXPECT_DOUBLE_EQ(p.network("400g-roce", "t").line_gbps, 50);
  EXPECT_EQ(p.node("pcie4-4", "t").gpus, 4);
  EXPECT_EQ(p.node("pcie5-4", "t").fabric, NodeFabric::pcie);
  EXPECT_EQ(p.network("10gbe", "t").transport, Transport::tcp);
  // The files in the source tree are the ones built in.
  const Presets from_files = load_presets(std::string(FB_SOURCE_DIR) + "/profiles/presets");
  EXPECT_EQ(from_files.gpus.size(), p.gpus.size());
}

TEST(Presets, NetworkSpecsSetTheNicsPerNode) {
  const Presets& p = builtin_presets();
  const Link eight = resolve_network("8x400g-ndr-ib", p);
  EXPECT_EQ(eight.label, "8x400g-ndr-ib");
  EXPECT_DOUBLE_EQ(eight.line_gbps, 400);
  EXPECT_DOUBLE_EQ(eight.bw_gbps, 400 * 0.96);
  EXPECT_EQ(resolve_network("1x400g-ndr-ib", p).label, "1x400g-ndr-ib");
  EXPECT_DOUBLE_EQ(resolve_network("1x400g-ndr-ib", p).bw_gbps, 50 * 0.96);
  // A bare name hides the NIC count (1 HCA or 8?): refused, naming both.
  try {
    resolve_network("400g-ndr-ib", p);
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("network '400g-ndr-ib': say how many NICs each node has, e.g. 1x400g-ndr-ib "
                                         "or 8x400g-ndr-ib"),
              std::string::npos)
        << e.what();
  }
  try {
    resolve_network("4x800g-xdr", p);
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("network '4x800g-xdr': no such network preset '800g-xdr'; known: 10gbe"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(resolve_network("0x10gbe", p), UsageError);
  EXPECT_THROW(parse_network_presets("networks:\n  - {name: a, rate: 100, alpha_us: 1, source: s}"), UsageError);
}

class MeasuredLink : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_model_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(MeasuredLink, CurveWhereTheShapeWasMeasuredDerivedElsewhere) {
  // Two nodes, one rank each: all_reduce at 10 us + S / (2 GB/s).
  const std::string path = dir_ + "/two_nodes.jsonl";
  test::write_results(path, test::alpha_beta_rows("all_reduce", "inter", 2, 10.0, 2.0, 0.0, 1024, 1 << 20), 2);
  Fabric f;
  f.intra = resolve_node("nvlink3-8", builtin_presets());
  f.inter = resolve_network(path, builtin_presets());
  EXPECT_EQ(f.inter.label, path + "@inter");
  // Ring all_reduce on 2 ranks: 2 steps, busbw factor 1.
  EXPECT_NEAR(f.inter.hop_us, 5.0, 1e-6);
  EXPECT_NEAR(f.inter.bw_gbps, 2.0, 1e-6);
  const CollectiveCost inside = collective_cost(f, Op::all_reduce, 4096, {1, 2, 1});
  EXPECT_EQ(inside.basis, Basis::measured);
  EXPECT_EQ(inside.algorithm, "measured");
  EXPECT_NEAR(inside.time_us, 10.0 + 4096 / 2e3, 1e-6);
  const CollectiveCost beyond = collective_cost(f, Op::all_reduce, 64 << 20, {1, 2, 1});
  EXPECT_EQ(beyond.basis, Basis::fit);
  EXPECT_NEAR(beyond.time_us, 10.0 + (64 << 20) / 2e3, 1e-3);
  // Four nodes were never measured: NCCL's ring on the measured latency per
  // step (the fixed cost is inside it) and bandwidth.
  const CollectiveCost four = collective_cost(f, Op::all_reduce, 1 << 20, {1, 4, 1});
  EXPECT_EQ(four.basis, Basis::model);
  EXPECT_EQ(four.algorithm, "ring");
  EXPECT_NEAR(four.time_us, 6 * 5.0 + 1.5 * (1 << 20) / 2e3, 1e-6);
  EXPECT_EQ(collective_cost(f, Op::all_reduce, 4096, {8, 2, 1}).basis, Basis::preset);  // NVLink from a preset
}

TEST_F(MeasuredLink, AStepOnAMeasuredNetworkUsesItsCurve) {
  const std::string path = dir_ + "/two_nodes.jsonl";
  test::write_results(path, test::alpha_beta_rows("all_reduce", "inter", 2, 10.0, 2.0, 0.0, 1024, 64 << 20), 2);
  Workload w = test::small_workload();  // DDP
  w.cluster.gpus_per_node = 1;          // one GPU per node: the measured shape
  w.global_batch = 2;
  w.bucket_bytes = 32ull << 20;  // 64 calls of 32 MiB: a measured size exactly
  const Fabric fabric = fabric_for(w, path, builtin_presets());
  StepCost s = predict_step(w, fabric, builtin_presets());
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items.front().where, "inter");
  EXPECT_EQ(s.items.front().basis, Basis::measured);
  EXPECT_NEAR(s.items.front().time_per_call_us, 10.0 + (32 << 20) / 2e3, 1e-6);
  // Eight GPUs per node run a shape the file never measured.
  w.cluster.gpus_per_node = 8;
  w.global_batch = 16;
  s = predict_step(w, fabric_for(w, path, builtin_presets()), builtin_presets());
  EXPECT_EQ(s.items.front().where, "intra+inter");
  EXPECT_EQ(s.items.front().basis, Basis::preset);  // the node's side is a preset
  EXPECT_EQ(s.items.front().algorithm, "ring");
}

TEST_F(MeasuredLink, RailRowsAreTheNodesNicsTogether) {
  // 8 rails at once, each 1 GB/s: the node moves 8 GB/s, and a group of one
  // rank per node with 8 such groups at once is exactly what was measured.
  const std::string path = dir_ + "/rail.jsonl";
  test::write_results(path, test::alpha_beta_rows("all_reduce", "rail", 2, 4.0, 1.0, 0.0, 1024, 1 << 20, 8), 2);
  Fabric f;
  f.intra = resolve_node("nvlink3-8", builtin_presets());
  f.inter = resolve_network(path, builtin_presets());
  EXPECT_EQ(f.inter.label, path + "@rail");
  EXPECT_NEAR(f.inter.bw_gbps, 8.0, 1e-6);
  const CollectiveCost rail = collective_cost(f, Op::all_reduce, 1 << 19, {1, 2, 8});
  EXPECT_EQ(rail.basis, Basis::measured);
  EXPECT_NEAR(rail.time_us, 4.0 + (1 << 19) / 1e3, 1e-6);
  EXPECT_NE(collective_cost(f, Op::all_reduce, 1 << 19, {1, 2, 1}).basis, Basis::measured);
}

TEST_F(MeasuredLink, OneNodeFilesSayWhatToDoInstead) {
  const std::string path = dir_ + "/one_node.jsonl";
  test::write_results(path, test::alpha_beta_rows("all_reduce", "global", 2, 1.0, 3.0, 0.0), 1);
  try {
    resolve_network(path, builtin_presets());
    ADD_FAILURE();
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("no inter-node rows (scope inter or rail; it has: global)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(path + "@global"), std::string::npos) << msg;
    EXPECT_NE(msg.find("network preset: 1x10gbe"), std::string::npos) << msg;
  }
  // Named explicitly, the global rows stand in for the network; on one node
  // they are also the node's fabric.
  EXPECT_EQ(resolve_network(path + "@global", builtin_presets()).label, path + "@global");
  EXPECT_EQ(resolve_node(path, builtin_presets()).label, path + "@global");
  EXPECT_THROW(resolve_network(path + "@rail", builtin_presets()), UsageError);
  EXPECT_THROW(resolve_network(dir_ + "/absent.jsonl", builtin_presets()), UsageError);
}

}  // namespace
}  // namespace fb::model
