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
