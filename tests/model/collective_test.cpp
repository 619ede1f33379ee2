// NCCL's cost model of one collective (src/graph/tuning.cc): every step of
// the ring pays its hop, a ring across nodes runs at its slowest link, the
// fastest of ring, tree and NVLS and of LL, LL128 and Simple is chosen, and
// the output says which, with its formula.
#include "fabricbench/model/collective.hpp"

#include <gtest/gtest.h>

#include "fabricbench/model/formulas.hpp"

namespace fb::model {
namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024 * 1024;

Fabric fabric(const char* node, const char* network, GpuArch arch = GpuArch::ampere) {
  Fabric f;
  f.intra = resolve_node(node, builtin_presets());
  if (network[0] != '\0') f.inter = resolve_network(network, builtin_presets());
  f.arch = arch;
  return f;
}

// 8 x A100 per node on 8 x 200G HDR: NCCL's ring runs at the slower of the
// NVLink ring (300 x 0.77 = 231 GB/s) and the node's 8 NICs together (8 x 25
// x 0.96 = 192 GB/s): about 190 GB/s busbw, as measured on DGX A100 clusters
// (NVIDIA/nccl #812). Adding the NVLink and network phases one after the
// other gave 111 to 146.
TEST(Collective, ARingAcrossNodesRunsAtItsSlowestLink) {
  const Fabric f = fabric("nvlink3-8", "8x200g-hdr-ib");
  for (const int nodes : {2, 4, 16}) {
    const CollectiveCost c = collective_cost(f, Op::all_reduce, 4 * kBytesPerGiB, {8, nodes, 1});
    EXPECT_EQ(c.algorithm, "ring") << nodes;
    EXPECT_EQ(c.protocol, "Simple") << nodes;
    EXPECT_NEAR(c.busbw_gbps, 192.0, 1e-9) << nodes;
    const double n = 8.0 * nodes;
    EXPECT_NEAR(c.time_us, c.latency_us + 2 * (n - 1) / n * 4 * kBytesPerGiB / 192e3, 1e-6 * c.time_us) << nodes;
  }
  // On one NIC per node the NIC is the slowest link.
  EXPECT_NEAR(collective_cost(fabric("nvlink3-8", "1x200g-hdr-ib"), Op::all_reduce, 4 * kBytesPerGiB, {8, 2, 1}).busbw_gbps,
              24.0, 1e-9);
  // Eight rails' groups at once (tp 8, dp across nodes) get one NIC each.
  EXPECT_NEAR(collective_cost(f, Op::all_gather, 4 * kBytesPerGiB, {1, 4, 8}).busbw_gbps, 24.0, 1e-9);
}

// Every step of the ring pays a hop: the NVLink ones on every node, not
// once, and the network ones at NCCL's network latency.
TEST(Collective, EveryRingStepPaysItsHop) {
  const Fabric f = fabric("nvlink3-8", "8x200g-hdr-ib");
  // All-gather on 4 nodes x 8, large enough for Simple: 8.4 + 28 x 3.4 + 3 x 14.
  const CollectiveCost ag = collective_cost(f, Op::all_gather, 16 * kBytesPerGiB, {8, 4, 1});
  ASSERT_EQ(ag.protocol, "Simple");
  EXPECT_NEAR(ag.latency_us, 8.4 + 28 * 3.4 + 3 * 14.0, 1e-9);
  // At 384 and 1536 GPUs a ring's latency is milliseconds, whatever the
  // protocol NCCL picks for a 25 MiB bucket (LL128: 14 + 336 x 1.9 + 47 x 4).
  const CollectiveCost at384 = collective_cost(f, Op::all_gather, 25 << 20, {8, 48, 1});
  EXPECT_EQ(at384.protocol, "LL128");
  EXPECT_NEAR(at384.latency_us, 14.0 + 336 * 1.9 + 47 * 4.0, 1e-9);
  // At 1536 NCCL's model prefers LL (6.6 + 1344 x 1.0 + 191 x 2.7 us, at
  // most 20.4 GB/s) to LL128's 3.3 ms of latency.
  const CollectiveCost at1536 = collective_cost(f, Op::all_gather, 25 << 20, {8, 192, 1});
  EXPECT_EQ(at1536.protocol, "LL");
  EXPECT_NEAR(at1536.latency_us, 6.6 + 1344 * 1.0 + 191 * 2.7, 1e-9);
  EXPECT_GT(at1536.time_us, 3000);
  // One GPU per node: every step crosses the network, at NCCL's tree row.
  const CollectiveCost one = collective_cost(f, Op::reduce_scatter, 16 * kBytesPerGiB, {1, 4, 8});
  EXPECT_NEAR(one.latency_us, 8.4 + 3 * 14.0, 1e-9);
  // Ring all_reduce across nodes, Simple: x 1.4 ("plateau", sm80 and newer).
  const CollectiveCost ar = collective_cost(f, Op::all_reduce, 16 * kBytesPerGiB, {8, 2, 1});
  ASSERT_EQ(ar.algorithm + "/" + ar.protocol, "ring/Simple");
  EXPECT_NEAR(ar.latency_us, (8.4 + 28 * 3.4 + 2 * 14.0) * 1.4, 1e-9);
}

// The tree's latency grows with log2 of the nodes: at scale it wins the
// small and medium all-reduces, the ring the large ones.
TEST(Collective, TreeWinsSmallAllReducesAtScaleAndRingTheLargeOnes) {
  const Fabric f = fabric("nvlink3-8", "8x200g-hdr-ib");
  const CollectiveCost small = collective_cost(f, Op::all_reduce, 1 << 20, {8, 128, 1});
  EXPECT_EQ(small.algorithm, "tree");
  const int depth = 7;  // log2(128)
  const double tree_latency = 2 * (7 * (small.protocol == "LL128" ? 1.25 : small.protocol == "LL" ? 0.6 : 4.0) +
                                   depth * (small.protocol == "LL128" ? 8.5 : small.protocol == "LL" ? 5.0 : 14.0));
  EXPECT_NEAR(small.latency_us, (small.protocol == "Simple" ? 8.4 : small.protocol == "LL" ? 6.8 : 14.0) + tree_latency,
              1e-9);
  EXPECT_EQ(collective_cost(f, Op::all_reduce, 16 * kBytesPerGiB, {8, 128, 1}).algorithm, "ring");
  // Trees serve all_reduce only.
  EXPECT_EQ(collective_cost(f, Op::all_gather, 1 << 20, {8, 128, 1}).algorithm, "ring");
}

// NVLS inside an NVSwitch node where the GPU has it (H100/H200: 476 GB/s
// busbw measured), the NVLink ring elsewhere.
TEST(Collective, NvlsInsideAHopperNode) {
  const CollectiveCost h100 =
      collective_cost(fabric("nvlink4-8", "", GpuArch::hopper), Op::all_reduce, 1 * kBytesPerGiB, {8, 1, 1});
  EXPECT_EQ(h100.algorithm, "nvls");
  EXPECT_NEAR(h100.busbw_gbps, 476.0, 1e-9);
  EXPECT_NEAR(h100.latency_us, 25.0, 1e-9);
  const CollectiveCost a100 = collective_cost(fabric("nvlink3-8", ""), Op::all_reduce, 1 * kBytesPerGiB, {8, 1, 1});
  EXPECT_EQ(a100.algorithm, "ring");
  EXPECT_NEAR(a100.busbw_gbps, 300 * 0.77, 1e-9);
  EXPECT_EQ(collective_cost(fabric("nvlink4-8", "", GpuArch::hopper), Op::all_gather, 1 * kBytesPerGiB, {8, 1, 1}).algorithm,
            "ring");
}

// NCCL allows LL128 over NVLink and RDMA only.
TEST(Collective, Ll128OnlyOverNvlinkAndRdma) {
  for (const double bytes : {4096.0, 1.0 * (1 << 20), 64.0 * (1 << 20)}) {
    EXPECT_NE(collective_cost(fabric("nvlink3-8", "1x10gbe"), Op::all_gather, bytes, {8, 4, 1}).protocol, "LL128");
    EXPECT_NE(collective_cost(fabric("pcie4-8", "8x200g-hdr-ib"), Op::all_gather, bytes, {8, 4, 1}).protocol, "LL128");
    EXPECT_NE(collective_cost(fabric("pcie4-4", ""), Op::all_reduce, bytes, {4, 1, 1}).protocol, "LL128");
  }
  EXPECT_EQ(collective_cost(fabric("nvlink3-8", "8x200g-hdr-ib"), Op::all_gather, 1 << 20, {8, 4, 1}).protocol,
            "LL128");
  // Small messages go LL: the lowest latency per step.
  EXPECT_EQ(collective_cost(fabric("nvlink3-8", "8x200g-hdr-ib"), Op::all_gather, 1024, {8, 4, 1}).protocol, "LL");
}

// Inter-node bytes: the ring leaves each node once per channel with one
// rank's share, (n-1)/n of the size for n ranks (twice for all_reduce), for
// every group running at once.
TEST(Collective, InterNodeBytesUseTheRanksNotTheNodes) {
  const Fabric f = fabric("nvlink3-8", "8x200g-hdr-ib");
  EXPECT_DOUBLE_EQ(collective_cost(f, Op::all_gather, 1 << 30, {8, 2, 1}).inter_wire_bytes, 15.0 / 16 * (1 << 30));
  EXPECT_DOUBLE_EQ(collective_cost(f, Op::all_reduce, 1 << 30, {8, 2, 1}).inter_wire_bytes, 30.0 / 16 * (1 << 30));
  EXPECT_DOUBLE_EQ(collective_cost(f, Op::reduce_scatter, 1 << 30, {4, 2, 2}).inter_wire_bytes,
                   2 * 7.0 / 8 * (1 << 30));
  EXPECT_DOUBLE_EQ(collective_cost(f, Op::all_gather, 1 << 30, {8, 1, 1}).inter_wire_bytes, 0.0);
}

TEST(Collective, TheFormulaSaysWhatItUsed) {
  const CollectiveCost c = collective_cost(fabric("nvlink3-8", "8x200g-hdr-ib"), Op::all_reduce, 4 * kBytesPerGiB, {8, 2, 1});
  EXPECT_EQ(c.where, "intra+inter");
  EXPECT_EQ(c.basis, Basis::preset);
  EXPECT_NE(c.formula.find("ring Simple on 16 ranks: 8.4 + 28 x 3.4 + 2 x 14 us x 1.4"), std::string::npos)
      << c.formula;
  EXPECT_NE(c.formula.find("1.88 x S / 192 GB/s (slowest of nvlink3-8 per GPU and 8x200g-hdr-ib per node)"),
            std::string::npos)
      << c.formula;
  const CollectiveCost p2p = collective_cost(fabric("nvlink3-8", "8x200g-hdr-ib"), Op::sendrecv, 1 << 20, {1, 2, 8});
  EXPECT_EQ(p2p.algorithm, "p2p");
  EXPECT_NEAR(p2p.busbw_gbps, 24.0, 1e-9);  // 8 senders share the node's 8 NICs
  EXPECT_EQ(collective_cost(fabric("nvlink3-8", ""), Op::all_reduce, 1 << 20, {1, 1, 1}).time_us, 0.0);
}

}  // namespace
}  // namespace fb::model
