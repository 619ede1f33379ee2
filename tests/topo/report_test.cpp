// Heterogeneity across ranks and the readable report, from record lines.
#include "fabricbench/topo/report.hpp"

#include <gtest/gtest.h>

#include "fabricbench/topo/inventory.hpp"
#include "fake_nvml.hpp"

namespace fb::topo {
namespace {

json line(const char* fixture, test::FakeNvml nvml, int rank, int node, const std::string& host,
          const char* nccl = "2.28.9") {
  LinkedVersions linked{"13.0", "13.0", nccl};
  return to_json(read_inventory(Sysfs(std::string(FB_TOPO_FIXTURES) + "/" + fixture), nvml, linked,
                                {rank, node, rank % 8, host, {}}, CudaView{}));
}

const Difference* find(const std::vector<Difference>& ds, const std::string& attribute) {
  for (const auto& d : ds)
    if (d.attribute == attribute) return &d;
  return nullptr;
}

TEST(Heterogeneity, SameNodesDifferInNothing) {
  const std::vector<json> lines{line("hgx-h100-8gpu-8ndr", test::fake_hgx_h100(), 0, 0, "a"),
                                line("hgx-h100-8gpu-8ndr", test::fake_hgx_h100(), 8, 1, "b")};
  EXPECT_TRUE(find_differences(lines).empty());
  const auto fp = fingerprint(lines[0]);
  EXPECT_EQ(fp[0], (std::pair<std::string, std::string>{"gpus", "8 x NVIDIA H100 80GB HBM3"}));
  EXPECT_EQ(fp[2].second, "8 x NVLink4 x18");
}

TEST(Heterogeneity, MixedGpusDriversAndNicsAreListedByHost) {
  auto a100 = test::fake_hgx_h100();
  for (auto& g : a100.gpus) {
    g.name = "NVIDIA A100-SXM4-80GB";
    g.arch = 7;
    g.links.resize(12);
  }
  a100.driver = "535.104.05";
  const std::vector<json> lines{line("hgx-h100-8gpu-8ndr", test::fake_hgx_h100(), 0, 0, "h100-a"),
                                line("hgx-h100-8gpu-8ndr", test::fake_hgx_h100(), 1, 0, "h100-a"),
                                line("hgx-h100-8gpu-8ndr", a100, 2, 1, "a100-b", "2.18.3"),
                                line("degraded-4gpu", test::fake_degraded(), 3, 2, "h100-c")};
  const auto ds = find_differences(lines);
  const Difference* gpus = find(ds, "gpus");
  ASSERT_NE(gpus, nullptr);
  ASSERT_EQ(gpus->values.size(), 3u);
  EXPECT_EQ(gpus->values[0].value, "4 x NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpus->values[1].value, "8 x NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpus->values[1].hosts, std::vector<std::string>{"a100-b"});
  EXPECT_EQ(gpus->values[2].hosts, std::vector<std::string>{"h100-a"});
  EXPECT_EQ(gpus->values[2].ranks, (std::vector<int>{0, 1}));
  ASSERT_NE(find(ds, "nvlink"), nullptr);
  ASSERT_NE(find(ds, "driver"), nullptr);
  ASSERT_NE(find(ds, "nccl"), nullptr);
  ASSERT_NE(find(ds, "nic_rates"), nullptr);  // 8 NDR ports; 2 NDR + 1 HDR
  EXPECT_EQ(find(ds, "cuda_runtime"), nullptr);
  const json j = to_json(ds);
  EXPECT_EQ(j[0]["attribute"], "gpus");
  EXPECT_EQ(j[0]["values"][1]["hosts"][0], "a100-b");
}

TEST(Report, H200MachineReadsAsTheLeadExpects) {
  const std::vector<json> lines{line("h200-vm", test::fake_h200_vm(), 0, 0, "h200")};
  const std::string text = format_report(lines, find_differences(lines));
  for (const char* expected :
       {"1 rank on 1 node", "GPU0  NVIDIA H200  143771 MiB  0000:00:05.0", "PCIe Gen5 x16 of Gen5 x16 (63.02 GB/s",
        "NVLink: none active (0 links)", "eth0", "speed unknown (eth0/speed reads -1", "intra  PCIe",
        "PCIe Gen5 x16 (GPU0)", "inter  TCP", "flags: none", "heterogeneity: none"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  // The speed the driver does not give is "?" with the reason in the note column, not 0 or 10 Gbit/s.
  EXPECT_NE(
      text.find("\n    name  kind      state  rate (Gbit/s)  MTU (bytes)  firmware  driver      bus_id        NUMA  "
                "near GPUs (PCIe switch)  note\n"
                "    eth0  Ethernet  up                 ?         1500  ?         virtio_net  0000:00:03.0     ?  "
                "                         speed unknown (eth0/speed reads -1"),
      std::string::npos)
      << text;
}

TEST(Report, FlagsMatrixAndUnknownsAreShown) {
  test::FakeNvml none;
  none.reason = "NVML not loaded: libnvidia-ml.so.1: cannot open shared object file";
  const std::vector<json> lines{line("degraded-4gpu", test::fake_degraded(), 0, 0, "n0"),
                                line("degraded-4gpu", none, 1, 1, "n1")};
  const std::string text = format_report(lines, find_differences(lines));
  for (const char* expected :
       {"2 ranks on 2 nodes", "GPU2: PCIe running Gen4 x8 of Gen5 x16", "mlx5_3:1: port DOWN", "GPU matrix", "NV18",
        "PIX", "unknown, and why:", "cannot open shared object file", "heterogeneity: these differ", "driver"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  // The matrix's head stands over its columns (it stood three characters left of them).
  EXPECT_NE(text.find("\n           GPU0  GPU1  GPU2  GPU3\n    GPU0 "), std::string::npos) << text;
}

// The NICs, the paths and the differences are tables: a head over every
// column, the unit in the head (Gbit/s line rates, GB/s peaks), figures bare
// and right-aligned under it. The old fixed-width lines had no head.
TEST(Report, NicsPathsAndDifferencesAreTablesWithHeads) {
  const std::vector<json> lines{line("hgx-h100-8gpu-8ndr", test::fake_hgx_h100(), 0, 0, "h100-a"),
                                line("degraded-4gpu", test::fake_degraded(), 1, 1, "h100-c")};
  const std::string text = format_report(lines, find_differences(lines));
  for (const char* expected :
       {// NICs: the degraded node's head and first row, an HGX port with the GPUs behind its switch.
        "\n    name      kind  state   rate (Gbit/s)  MTU (bytes)  firmware    driver     bus_id        NUMA  "
        "near GPUs (PCIe switch)\n"
        "    mlx5_0:1  IB    ACTIVE            400            ?  28.39.1002  mlx5_core  0000:40:00.0     0\n",
        "\n    mlx5_0:1  IB        ACTIVE            400            ?  28.39.1002  mlx5_core  0000:1b:00.0     0  "
        "GPU0 PIX GPU1 PIX\n",
        "\n    eno1      Ethernet  up                  1         1500  ?           igb        0000:02:00.0     0\n",
        // Paths: a known peak, and an unknown one with its reason after the basis.
        "\n    scope  class   peak (GB/s)  basis\n    intra  NVLink          400  NVLink4 x16\n",
        "\n    inter  TCP           0.125  1 x 1 Gb/s (eno1)\n",
        "\n    inter  TCP               ?  no TCP interface up  (no TCP link is up)\n",
        // Differences: the attribute on its first value's row, the hosts of each value.
        "\nheterogeneity: these differ between ranks\n  attribute   value                                  hosts\n",
        "\n  nic_rates   1 x 1 Gb/s Ethernet + 8 x 400 Gb/s IB  h100-a\n"
        "              1 x 200 Gb/s IB + 2 x 400 Gb/s IB      h100-c\n"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  EXPECT_EQ(text.find("note"), std::string::npos) << "no NIC has a note: no note column\n" << text;
}

}  // namespace
}  // namespace fb::topo
