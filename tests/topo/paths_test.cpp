// Paths and peaks in the corners the fixtures do not reach.
#include <gtest/gtest.h>

#include "fabricbench/topo/inventory.hpp"

namespace fb::topo {
namespace {

Nic port(const std::string& name, bool up, Fact<double> gbit, const std::string& kind = "IB") {
  Nic n;
  n.name = name;
  n.kind = kind;
  n.up = up;
  n.rate_gbit = gbit;
  n.rate = up ? "400 Gb/sec (4X NDR)" : "10 Gb/sec (4X SDR)";
  return n;
}

const Path* find(const std::vector<Path>& paths, const std::string& scope, const std::string& cls) {
  for (const auto& p : paths)
    if (p.scope == scope && p.cls == cls) return &p;
  return nullptr;
}

TEST(Paths, AllPortsDownGivesNoPeakAndSaysSo) {
  Inventory inv;
  inv.nics = {port("mlx5_0:1", false, 10.0), port("mlx5_1:1", false, 10.0)};
  const auto paths = derive_paths(inv);
  const Path* ib = find(paths, "inter", "IB");
  ASSERT_NE(ib, nullptr);
  EXPECT_FALSE(ib->peak_gbps);
  EXPECT_EQ(ib->peak_gbps.why(), "all 2 IB ports are down");
  const Path* tcp = find(paths, "inter", "TCP");
  ASSERT_NE(tcp, nullptr);
  EXPECT_EQ(tcp->peak_gbps.why(), "no TCP link is up");
}

TEST(Paths, OneUnknownRateMakesTheSumUnknown) {
  Inventory inv;
  inv.nics = {port("mlx5_0:1", true, 400.0), port("mlx5_1:1", true, Fact<double>::unknown("rate 'fast' ..."))};
  const auto paths = derive_paths(inv);
  const Path* ib = find(paths, "inter", "IB");
  ASSERT_NE(ib, nullptr);
  EXPECT_FALSE(ib->peak_gbps);  // never the 50 GB/s of the one port that is known
  EXPECT_NE(ib->peak_gbps.why().find("mlx5_1:1"), std::string::npos) << ib->peak_gbps.why();
}

// The domain scope's path (issue 37): the GPU's NVLink where it joined a
// multi-node NVLink domain, nothing where it did not.
Gpu nvl72_gpu(FabricState state, const std::string& status) {
  Gpu g;
  g.nvlink.active = 18;
  g.nvlink.generation = 5;
  GpuFabric f;
  f.cluster_uuid = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";
  f.clique_id = 3;
  f.state = state;
  f.status = status;
  g.fabric = f;
  return g;
}

TEST(Paths, DomainIsTheGpusNvlinkWhereItJoinedADomain) {
  Inventory inv;
  inv.gpus = {nvl72_gpu(FabricState::completed, "")};
  inv.rank_gpu = 0;
  const auto paths = derive_paths(inv);
  const Path* d = find(paths, "domain", "NVLink");
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->peak_gbps) << d->peak_gbps.why();
  EXPECT_DOUBLE_EQ(*d->peak_gbps, 900.0);  // 18 links x 50 GB/s
  EXPECT_EQ(d->basis, "NVLink5 x18 (GPU0 in NVLink domain 0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/3)");
}

TEST(Paths, NoDomainPathWhereTheGpuHasNotJoinedOne) {
  for (const Gpu& g : {nvl72_gpu(FabricState::in_progress, ""), nvl72_gpu(FabricState::completed, "Unknown Error"),
                       nvl72_gpu(FabricState::not_supported, "")}) {
    Inventory inv;
    inv.gpus = {g};
    inv.rank_gpu = 0;
    const auto paths = derive_paths(inv);
    EXPECT_EQ(find(paths, "domain", "NVLink"), nullptr) << fabric_state_name(g.fabric->state);
  }
}

TEST(Paths, NvLinkWithUnknownGenerationHasNoPeak) {
  Inventory inv;
  Gpu g;
  g.nvlink.active = 12;
  g.nvlink.generation = Fact<int>::unknown("NVML NVLink version 99 is not on file");
  inv.gpus = {g};
  inv.rank_gpu = 0;
  const auto paths = derive_paths(inv);
  const Path* nv = find(paths, "intra", "NVLink");
  ASSERT_NE(nv, nullptr);
  EXPECT_FALSE(nv->peak_gbps);
  EXPECT_EQ(nv->basis, "NVLink? x12");
}

TEST(Paths, A100AndH800FromGenerationAndLinks) {
  for (const auto& [gen, links, peak] : {std::tuple{3, 12, 300.0}, std::tuple{4, 8, 200.0}}) {
    Inventory inv;
    Gpu g;
    g.nvlink.active = links;
    g.nvlink.generation = gen;
    inv.gpus = {g};
    inv.rank_gpu = 0;
    const auto paths = derive_paths(inv);
    const Path* nv = find(paths, "intra", "NVLink");
    ASSERT_NE(nv, nullptr);
    EXPECT_DOUBLE_EQ(*nv->peak_gbps, peak);
  }
}

}  // namespace
}  // namespace fb::topo
