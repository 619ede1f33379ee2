// Presets (built in, with sources) and measured links: network specs, the
// measured curve inside the sweep, derived parameters for other shapes, and
// the messages for files that lack what the model needs.
#include "fabricbench/model/fabric.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/formulas.hpp"
#include "fabricbench/model/step.hpp"
#include "model_workloads.hpp"
#include "model_rows.hpp"
#include "process.hpp"

namespace fb::model {
namespace {

TEST(Presets, EveryEntryHasItsFiguresAndSource) {
  const Presets& p = builtin_presets();
  EXPECT_EQ(p.networks.size(), 5u);
  EXPECT_EQ(p.gpus.size(), 8u);
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
  EXPECT_EQ(resolve_network("10gbe", p).label, "1x10gbe");  // the preset's default count
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

TEST_F(MeasuredLink, CurveInsideDerivedAlphaBetaOutside) {
  // Two nodes, one rank each: all_reduce at 10 us + S / (2 GB/s).
  const std::string path = dir_ + "/two_nodes.jsonl";
  test::write_results(path, test::alpha_beta_rows("all_reduce", "inter", 2, 10.0, 2.0, 0.0, 1024, 1 << 20), 2);
  const Link l = resolve_network(path, builtin_presets());
  EXPECT_EQ(l.label, path + "@inter");
  // Ring all_reduce on 2 ranks: 2 hops, busbw factor 1.
  EXPECT_NEAR(l.alpha_us, 5.0, 1e-6);
  EXPECT_NEAR(l.bw_gbps, 2.0, 1e-6);
  const Timed inside = link_time(l, Op::all_reduce, 2, 4096);
  EXPECT_EQ(inside.basis, Basis::measured);
  EXPECT_NEAR(inside.time_us, 10.0 + 4096 / 2e3, 1e-6);
  const Timed beyond = link_time(l, Op::all_reduce, 2, 64 << 20);
  EXPECT_EQ(beyond.basis, Basis::fit);
  EXPECT_NEAR(beyond.time_us, 10.0 + (64 << 20) / 2e3, 1e-3);
  // Four nodes were never measured: the derived ring.
  const Timed four = link_time(l, Op::all_reduce, 4, 1 << 20);
  EXPECT_EQ(four.basis, Basis::model);
  EXPECT_EQ(link_time(resolve_network("1x10gbe", builtin_presets()), Op::all_reduce, 2, 4096).basis, Basis::preset);
  EXPECT_NEAR(four.time_us, ring_time_us(Op::all_reduce, 4, 1 << 20, 5.0, 2.0), 1e-6);
}

TEST_F(MeasuredLink, AStepOnAMeasuredNetworkUsesItsCurve) {
  const std::string path = dir_ + "/two_nodes.jsonl";
  test::write_results(path, test::alpha_beta_rows("all_reduce", "inter", 2, 10.0, 2.0, 0.0, 1024, 64 << 20), 2);
  Workload w = test::small_workload();  // DDP, 2 nodes x 8
  w.bucket_bytes = 32ull << 20;         // 64 calls of 32 MiB: a measured size exactly
  const Fabric fabric = fabric_for(w, path, builtin_presets());
  const StepCost s = predict_step(w, fabric, builtin_presets());
  ASSERT_EQ(s.items.size(), 1u);
  const CommItem& dp = s.items.front();
  EXPECT_EQ(dp.where, "intra+inter");
  EXPECT_EQ(dp.inter_basis, Basis::measured);
  EXPECT_EQ(dp.intra_basis, Basis::preset);
  EXPECT_EQ(dp.basis(), Basis::measured);
  // Per call: the preset's intra reduce-scatter and all-gather around the
  // measured inter-node all_reduce of the node's 25 MiB.
  const double bytes = dp.bytes_per_call;
  const Link& intra = fabric.intra;
  const double expected = ring_time_us(Op::reduce_scatter, 8, bytes, intra.alpha_us, intra.bw_gbps) +
                          (10.0 + bytes / 2e3) +
                          ring_time_us(Op::all_gather, 8, bytes, intra.alpha_us, intra.bw_gbps);
  EXPECT_NEAR(dp.time_per_call_us, expected, 1e-6 * expected);
}

TEST_F(MeasuredLink, RailRowsBecomeNodeLevel) {
  // 8 rails at once, each 1 GB/s: the node moves 8 GB/s.
  const std::string path = dir_ + "/rail.jsonl";
  test::write_results(path, test::alpha_beta_rows("all_reduce", "rail", 2, 4.0, 1.0, 0.0, 1024, 1 << 20, 8), 2);
  const Link l = resolve_network(path, builtin_presets());
  EXPECT_EQ(l.label, path + "@rail");
  EXPECT_NEAR(l.bw_gbps, 8.0, 1e-6);
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
    EXPECT_NE(msg.find("network preset: 10gbe"), std::string::npos) << msg;
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
