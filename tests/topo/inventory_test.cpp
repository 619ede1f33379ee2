// Whole inventories of the fixture nodes: classification, spec peaks, flags.
#include "fabricbench/topo/inventory.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fake_nvml.hpp"

namespace fb::topo {
namespace {

using test::FakeNvml;

Inventory read(const char* fixture, FakeNvml nvml, int local_rank = 0, std::optional<std::string> cvd = std::nullopt) {
  LinkedVersions linked{"13.0", Fact<std::string>::unknown("no driver"), "2.28.9"};
  return read_inventory(Sysfs(std::string(FB_TOPO_FIXTURES) + "/" + fixture), nvml, linked,
                        {local_rank, 0, local_rank, "node-a", {}}, CudaView{cvd, std::nullopt, -1});
}

const Path& path(const Inventory& inv, const std::string& scope, const std::string& cls) {
  for (const auto& p : inv.paths)
    if (p.scope == scope && p.cls == cls) return p;
  static const Path none{"", "", Fact<double>::unknown("no such path"), ""};
  ADD_FAILURE() << "no " << scope << " " << cls << " path";
  return none;
}

const Nic& nic(const Inventory& inv, const std::string& name) {
  for (const auto& n : inv.nics)
    if (n.name == name) return n;
  static const Nic none;
  ADD_FAILURE() << "no NIC " << name;
  return none;
}

bool has_flag(const Inventory& inv, const std::string& text) {
  for (const auto& f : inv.flags)
    if (f == text) return true;
  return false;
}

TEST(Inventory, HgxNodeWithNvSwitchesAndEightNdrRails) {
  const auto inv = read("hgx-h100-8gpu-8ndr", test::fake_hgx_h100(), 1);
  ASSERT_EQ(inv.gpus.size(), 8u);
  const Gpu& g = inv.gpus[1];
  EXPECT_EQ(*g.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(*g.bus_id, "0000:1c:00.0");
  EXPECT_EQ(*g.architecture, "Hopper");
  EXPECT_EQ(*g.numa_node, 0);
  EXPECT_EQ(*g.cpu_affinity, "0-55,112-167");
  EXPECT_EQ(*inv.gpus[4].numa_node, 1);
  EXPECT_EQ(g.nvlink.active, 18);
  EXPECT_EQ(*g.nvlink.generation, 4);
  EXPECT_DOUBLE_EQ(*g.nvlink.total_gbps(), 450.0);
  ASSERT_EQ(g.nvlink.peers.size(), 1u);
  EXPECT_EQ(g.nvlink.peers[0].peer, "NVSwitch");
  EXPECT_NEAR(*g.pcie.peak_gbps(), 63.0, 0.1);
  EXPECT_TRUE(inv.flags.empty()) << inv.flags.front();
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 8; ++j) EXPECT_EQ(inv.gpu_matrix[i][j], i == j ? "X" : "NV18");

  ASSERT_EQ(inv.nics.size(), 9u);  // 8 HCA ports and eno1; no lo, no IPoIB interfaces
  const Nic& hca = nic(inv, "mlx5_0:1");
  EXPECT_EQ(hca.kind, "IB");
  EXPECT_TRUE(hca.up);
  EXPECT_DOUBLE_EQ(*hca.rate_gbit, 400);
  EXPECT_EQ(*hca.firmware, "28.39.1002");
  EXPECT_EQ(*hca.driver, "mlx5_core");
  EXPECT_EQ(hca.netdevs, std::vector<std::string>{"ibp27s0"});
  EXPECT_EQ(hca.gpu_distance[0].second, "PIX");
  EXPECT_EQ(hca.gpu_distance[2].second, "NODE");
  EXPECT_EQ(hca.gpu_distance[4].second, "SYS");
  ASSERT_EQ(inv.rails.size(), 8u);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(inv.rails[k].gpu, k);
    EXPECT_EQ(inv.rails[k].nics, std::vector<std::string>{"mlx5_" + std::to_string(k) + ":1"});
    EXPECT_EQ(inv.rails[k].distance, "PIX");
  }

  EXPECT_EQ(*inv.rank_gpu, 1);
  EXPECT_DOUBLE_EQ(*path(inv, "intra", "NVLink").peak_gbps, 450.0);
  EXPECT_EQ(path(inv, "intra", "NVLink").basis, "NVLink4 x18");
  EXPECT_DOUBLE_EQ(*path(inv, "inter", "IB").peak_gbps, 400.0);
  EXPECT_EQ(path(inv, "inter", "IB").basis, "8 x 400 Gb/s NDR");
  EXPECT_DOUBLE_EQ(*path(inv, "inter", "TCP").peak_gbps, 0.125);  // the 1 GbE management port
  EXPECT_DOUBLE_EQ(*path(inv, "rail", "IB").peak_gbps, 50.0);
  EXPECT_EQ(path(inv, "rail", "IB").basis, "1 x 400 Gb/s NDR (mlx5_1:1, PIX to GPU1)");
  EXPECT_FALSE(path(inv, "intra", "SHM").peak_gbps);
}

TEST(Inventory, RoceNodeWithPcieGpusAcrossSockets) {
  const auto inv = read("roce-2gpu", test::fake_roce_l40s(), 1);
  ASSERT_EQ(inv.gpus.size(), 2u);
  EXPECT_EQ(*inv.gpus[0].nvlink.present, 0);
  EXPECT_EQ(inv.gpu_matrix[0][1], "SYS");
  const Nic& port = nic(inv, "mlx5_0:1");
  EXPECT_EQ(port.kind, "RoCE");
  EXPECT_EQ(*port.mtu_bytes, 9000);
  EXPECT_EQ(*port.firmware, "22.36.1010");
  EXPECT_EQ(port.gpu_distance[0].second, "PHB");
  EXPECT_EQ(port.gpu_distance[1].second, "SYS");
  EXPECT_EQ(nic(inv, "ens3f0np0").kind, "Ethernet");
  EXPECT_DOUBLE_EQ(*nic(inv, "ens3f0np0").rate_gbit, 200);
  ASSERT_EQ(inv.rails.size(), 2u);
  EXPECT_EQ(inv.rails[0].nics[0], "mlx5_0:1");
  EXPECT_EQ(inv.rails[1].nics[0], "mlx5_1:1");
  EXPECT_EQ(inv.rails[1].distance, "SYS");

  const Path& intra = path(inv, "intra", "PCIe");
  EXPECT_NEAR(*intra.peak_gbps, 31.5, 0.1);
  EXPECT_EQ(intra.basis, "PCIe Gen4 x16 (GPU1)");
  EXPECT_DOUBLE_EQ(*path(inv, "inter", "RoCE").peak_gbps, 50.0);
  EXPECT_EQ(path(inv, "inter", "RoCE").basis, "2 x 200 Gb/s");
  EXPECT_DOUBLE_EQ(*path(inv, "inter", "TCP").peak_gbps, 50.0);
  EXPECT_DOUBLE_EQ(*path(inv, "rail", "RoCE").peak_gbps, 25.0);
}

// AWS p5-like: EFA's link layer reads "Unknown"; its driver makes it an RDMA
// port, so the node has an inter-node EFA path and each GPU a rail of the
// two devices behind its switch.
TEST(Inventory, EfaDevicesAreRdmaPortsAndEachGpusRailHoldsItsSwitchMates) {
  const auto inv = read("efa-2gpu", test::fake_efa_2gpu(), 1);
  ASSERT_EQ(inv.gpus.size(), 2u);
  const Nic& efa = nic(inv, "rdmap36s0:1");
  EXPECT_EQ(efa.kind, "EFA");
  EXPECT_TRUE(efa.up);
  EXPECT_EQ(*efa.link_layer, "Unknown");
  EXPECT_EQ(*efa.driver, "efa");
  EXPECT_DOUBLE_EQ(*efa.rate_gbit, 100);
  EXPECT_TRUE(efa.flags.empty());
  EXPECT_EQ(nic(inv, "ens5").kind, "Ethernet");
  ASSERT_EQ(inv.rails.size(), 2u);
  EXPECT_EQ(inv.rails[0].nics, (std::vector<std::string>{"rdmap36s0:1", "rdmap37s0:1"}));
  EXPECT_EQ(inv.rails[1].nics, (std::vector<std::string>{"rdmap68s0:1", "rdmap69s0:1"}));
  EXPECT_EQ(inv.rails[1].distance, "PIX");
  EXPECT_DOUBLE_EQ(*path(inv, "inter", "EFA").peak_gbps, 50.0);  // 4 x 100 Gb/s
  EXPECT_EQ(path(inv, "inter", "EFA").basis, "4 x 100 Gb/s");
  EXPECT_DOUBLE_EQ(*path(inv, "rail", "EFA").peak_gbps, 25.0);  // GPU1's two devices
  EXPECT_TRUE(inv.flags.empty()) << inv.flags.front();
}

TEST(Inventory, TenGigabitCpuNode) {
  FakeNvml none;
  none.reason = "NVML not loaded: libnvidia-ml.so.1: cannot open shared object file";
  const auto inv = read("eth10g-cpu", none);
  EXPECT_TRUE(inv.gpus.empty());
  EXPECT_FALSE(inv.rank_gpu);
  EXPECT_EQ(inv.gpus_note, none.reason);
  EXPECT_FALSE(inv.software.driver);
  EXPECT_EQ(inv.software.driver.why(), none.reason);
  ASSERT_EQ(inv.nics.size(), 2u);
  EXPECT_DOUBLE_EQ(*nic(inv, "eth0").rate_gbit, 10.0);
  EXPECT_EQ(*nic(inv, "eth0").driver, "ixgbe");
  const Nic& unplugged = nic(inv, "eth1");
  EXPECT_FALSE(unplugged.up);
  EXPECT_FALSE(unplugged.rate_gbit);
  EXPECT_NE(unplugged.rate_gbit.why().find("unreadable"), std::string::npos);
  EXPECT_TRUE(unplugged.flags.empty());  // an unplugged Ethernet port is no fault
  EXPECT_DOUBLE_EQ(*path(inv, "inter", "TCP").peak_gbps, 1.25);
  EXPECT_EQ(path(inv, "inter", "TCP").basis, "1 x 10 Gb/s (eth0)");
  EXPECT_DOUBLE_EQ(*path(inv, "rail", "TCP").peak_gbps, 1.25);
  EXPECT_EQ(inv.paths.size(), 3u);  // intra SHM, inter TCP, rail TCP
}

TEST(Inventory, DegradedLinkPortDownSlowPortAndLinksDown) {
  const auto inv = read("degraded-4gpu", test::fake_degraded());
  EXPECT_TRUE(has_flag(inv, "GPU2: PCIe running Gen4 x8 of Gen5 x16"));
  EXPECT_TRUE(has_flag(inv, "GPU1: NVLink: 2 of 18 links down (link 4, 9)"));
  EXPECT_TRUE(has_flag(inv, "mlx5_3:1: port DOWN (physical state Disabled)"));
  EXPECT_TRUE(has_flag(inv, "mlx5_1:1: running 200 Gb/s where other IB ports run 400 Gb/s"));
  EXPECT_EQ(inv.flags.size(), 4u);  // GPU0 at Gen1 while idle (P8) is not a fault
  EXPECT_EQ(*inv.gpus[0].pcie.gen, 1);
  EXPECT_EQ(inv.gpus[1].nvlink.active, 16);
  EXPECT_DOUBLE_EQ(*inv.gpus[1].nvlink.total_gbps(), 400.0);
  // The peak is what the link promises (Gen5 x16); the flag says it runs below.
  EXPECT_NEAR(*inv.gpus[2].pcie.peak_gbps(), 63.0, 0.1);
  const Path& ib = path(inv, "inter", "IB");
  EXPECT_DOUBLE_EQ(*ib.peak_gbps, 125.0);  // 400 + 200 + 400 Gb/s; the down port counts nothing
  EXPECT_EQ(ib.basis, "1 x 200 Gb/s HDR + 2 x 400 Gb/s NDR; 1 port down");
  ASSERT_EQ(inv.rails.size(), 4u);  // three ports up for four GPUs: GPU3 shares
  EXPECT_EQ(inv.rails[2].nics[0], "mlx5_2:1");
  EXPECT_EQ(inv.rails[3].nics[0], "mlx5_0:1");
  EXPECT_EQ(inv.rails[3].distance, "PHB");  // GPUs and HCAs hang off different root ports
}

TEST(Inventory, H200VirtualMachine) {
  const auto inv = read("h200-vm", test::fake_h200_vm());
  ASSERT_EQ(inv.gpus.size(), 1u);
  const Gpu& g = inv.gpus[0];
  EXPECT_EQ(*g.model, "NVIDIA H200");
  EXPECT_EQ(*g.memory_bytes >> 20, 143771u);
  EXPECT_EQ(*g.pcie.gen, 5);
  EXPECT_EQ(*g.pcie.width, 16);
  EXPECT_EQ(g.pcie.source, "nvml");
  EXPECT_EQ(*g.nvlink.present, 0);
  EXPECT_FALSE(g.numa_node);
  EXPECT_TRUE(inv.flags.empty());
  ASSERT_EQ(inv.nics.size(), 1u);
  const Nic& eth0 = inv.nics[0];
  EXPECT_EQ(eth0.name, "eth0");
  EXPECT_EQ(*eth0.driver, "virtio_net");
  EXPECT_FALSE(eth0.rate_gbit);  // unknown: not 0, not 10 Gb/s
  EXPECT_NE(eth0.rate_gbit.why().find("reads -1"), std::string::npos) << eth0.rate_gbit.why();
  const Path& intra = path(inv, "intra", "PCIe");
  EXPECT_NEAR(*intra.peak_gbps, 63.02, 0.01);
  EXPECT_EQ(intra.basis, "PCIe Gen5 x16 (GPU0)");
  const Path& tcp = path(inv, "inter", "TCP");
  EXPECT_FALSE(tcp.peak_gbps);
  EXPECT_NE(tcp.peak_gbps.why().find("eth0"), std::string::npos);
  EXPECT_TRUE(inv.rails.empty());
  EXPECT_EQ(*inv.software.cuda_driver, "13.0");
  EXPECT_EQ(*inv.software.nccl, "2.28.9");
}

TEST(Inventory, BrokenTreeGivesUnknownsNotNumbers) {
  FakeNvml none;
  none.reason = "NVML not loaded";
  const auto inv = read("broken", none);
  ASSERT_EQ(inv.gpus.size(), 1u);
  const Gpu& g = inv.gpus[0];
  EXPECT_FALSE(g.model);
  EXPECT_NE(g.model.why().find("NVML not loaded"), std::string::npos);
  EXPECT_FALSE(g.pcie.gen);
  EXPECT_FALSE(g.pcie.peak_gbps());
  EXPECT_FALSE(g.numa_node);
  ASSERT_EQ(inv.nics.size(), 2u);
  const Nic& hca = nic(inv, "mlx5_0:1");
  EXPECT_EQ(hca.kind, "unknown");  // no link layer: neither IB nor RoCE
  EXPECT_FALSE(hca.rate_gbit);
  EXPECT_NE(hca.rate_gbit.why().find("'fast'"), std::string::npos);
  EXPECT_FALSE(nic(inv, "eth0").rate_gbit);
  for (const auto& p : inv.paths) {
    if (p.peak_gbps)
      EXPECT_GT(*p.peak_gbps, 0.0) << p.scope << " " << p.cls;
    else
      EXPECT_FALSE(p.peak_gbps.why().empty());
  }
  EXPECT_FALSE(path(inv, "intra", "PCIe").peak_gbps);
}

TEST(Inventory, NvmlCallsThatFailBecomeUnknown) {
  auto nvml = test::fake_h200_vm();
  nvml.gpus[0].failing = {"memory", "pcie", "uuid"};
  const auto inv = read("h200-vm", nvml);
  const Gpu& g = inv.gpus[0];
  EXPECT_FALSE(g.memory_bytes);
  EXPECT_NE(g.memory_bytes.why().find("Unknown Error"), std::string::npos);
  EXPECT_FALSE(g.uuid);
  // NVML's link unknown: sysfs's is read instead.
  EXPECT_EQ(g.pcie.source, "sysfs");
  EXPECT_EQ(*g.pcie.gen, 5);
  EXPECT_EQ(*g.pcie.max_width, 16);
}

TEST(Inventory, NoNvmlStillListsGpusFromSysfs) {
  FakeNvml none;
  none.reason = "nvmlInit: Driver Not Loaded (NVML error 9)";
  const auto inv = read("degraded-4gpu", none, 2);
  ASSERT_EQ(inv.gpus.size(), 4u);
  EXPECT_EQ(inv.gpus[2].pcie.source, "sysfs");
  EXPECT_EQ(*inv.gpus[2].pcie.width, 8);
  EXPECT_NE(inv.gpus[2].model.why().find("10de:2330"), std::string::npos);
  EXPECT_FALSE(inv.gpus[0].nvlink.present);
  EXPECT_EQ(inv.gpu_matrix[0][1], "PIX");
  EXPECT_NE(inv.flags.front().find("GPU2: PCIe running Gen4 x8 of Gen5 x16"), std::string::npos);
  EXPECT_EQ(*inv.rank_gpu, 2);
}

CudaView visible(std::optional<std::string> cvd, int device = -1) { return {std::move(cvd), std::nullopt, device}; }

TEST(Inventory, RankGpuFollowsCudaVisibleDevices) {
  const auto gpus = read("hgx-h100-8gpu-8ndr", test::fake_hgx_h100()).gpus;
  EXPECT_EQ(*pick_rank_gpu(gpus, 9, visible(std::nullopt)), 1);
  EXPECT_EQ(*pick_rank_gpu(gpus, 1, visible("6,7")), 7);
  EXPECT_EQ(*pick_rank_gpu(gpus, 0, visible("GPU-00000000-0000-0000-0000-000000000003")), 3);
  EXPECT_EQ(*pick_rank_gpu(gpus, 1, visible("5,99,6")), 5);  // CUDA stops at the first bad entry
  // An unknown UUID ends the list too: local rank 2 wraps to GPU 5, not on to GPU 3.
  EXPECT_EQ(*pick_rank_gpu(gpus, 2, visible("GPU-00000000-0000-0000-0000-000000000005,6,GPU-ffffffff,3")), 5);
  EXPECT_FALSE(pick_rank_gpu(gpus, 0, visible("")));
  EXPECT_FALSE(pick_rank_gpu({}, 0, visible(std::nullopt)));
}

TEST(Inventory, AnAmbiguousUuidPrefixEndsTheVisibleList) {
  // Two GPUs whose UUIDs share "GPU-8c1c4e0b": CUDA takes a prefix that
  // names more than one GPU as naming none, and shows only the GPUs before
  // it. Local rank 1 wraps to GPU 5, not on to GPU 2 (the first match) or 3.
  test::FakeNvml nvml = test::fake_hgx_h100();
  nvml.gpus[2].uuid = "GPU-8c1c4e0b-1111-2222-3333-444455556666";
  nvml.gpus[6].uuid = "GPU-8c1c4e0b-7777-2222-3333-444455556666";
  const auto gpus = read("hgx-h100-8gpu-8ndr", nvml).gpus;
  EXPECT_EQ(*pick_rank_gpu(gpus, 1, visible("5,GPU-8c1c4e0b,3")), 5);
  // Enough digits to pick out one GPU name it.
  EXPECT_EQ(*pick_rank_gpu(gpus, 1, visible("5,GPU-8c1c4e0b-7,3")), 6);
}

TEST(Inventory, RankGpuFollowsDevice) {
  // Issue 34, defect 12: --device 3 puts every rank on visible GPU 3, as the
  // GPU backends place it; the inventory said each rank's local index.
  const auto gpus = read("hgx-h100-8gpu-8ndr", test::fake_hgx_h100()).gpus;
  EXPECT_EQ(*pick_rank_gpu(gpus, 0, visible(std::nullopt, 3)), 3);
  EXPECT_EQ(*pick_rank_gpu(gpus, 5, visible(std::nullopt, 3)), 3);
  EXPECT_EQ(*pick_rank_gpu(gpus, 5, visible("6,7", 1)), 7);
  const auto beyond = pick_rank_gpu(gpus, 0, visible("6,7", 2));
  ASSERT_FALSE(beyond);
  EXPECT_NE(beyond.why().find("--device 2: 2 GPU(s) visible"), std::string::npos) << beyond.why();
}

TEST(Inventory, CudaIndicesFollowCudasOrderNotNvmls) {
  // Issue 34, defect 16: CUDA_VISIBLE_DEVICES indices are CUDA's numbering,
  // which is PCI order only with CUDA_DEVICE_ORDER=PCI_BUS_ID or GPUs of one
  // model. NVML lists GPU 0 at bus 0x1b here; move it to the end of the bus.
  test::FakeNvml nvml = test::fake_hgx_h100();
  nvml.gpus[0].bus_id = "00000000:FF:00.0";
  auto gpus = read("hgx-h100-8gpu-8ndr", nvml).gpus;
  EXPECT_EQ(*pick_rank_gpu(gpus, 0, visible("0")), 1);  // CUDA's device 0 is the lowest bus id
  EXPECT_EQ(*pick_rank_gpu(gpus, 7, visible(std::nullopt)), 0);
  // A node of mixed GPUs under CUDA's default FASTEST_FIRST order: the
  // numbering is CUDA's guess, so the rank's GPU is unknown, with the fix.
  gpus[3].model = std::string("NVIDIA L40S");
  const auto guessed = pick_rank_gpu(gpus, 0, visible("2"));
  ASSERT_FALSE(guessed);
  EXPECT_NE(guessed.why().find("set CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos) << guessed.why();
  EXPECT_EQ(*pick_rank_gpu(gpus, 0, CudaView{"2", "PCI_BUS_ID", -1}), 3);
  // UUIDs name a GPU whatever the order.
  EXPECT_EQ(*pick_rank_gpu(gpus, 0, visible("GPU-00000000-0000-0000-0000-000000000003")), 3);
}

TEST(Inventory, TrainedLinkAboveTheStatedMaximumRaisesIt) {
  auto nvml = test::fake_h200_vm();
  nvml.gpus[0].max_gen = 4;  // an emulated root port stating Gen4 under a link trained at Gen5
  const auto inv = read("h200-vm", nvml);
  EXPECT_EQ(*inv.gpus[0].pcie.max_gen, 5);
  EXPECT_NEAR(*inv.gpus[0].pcie.peak_gbps(), 63.0, 0.1);
  EXPECT_TRUE(inv.flags.empty());
}

TEST(Inventory, CpuListsInTheKernelsFormat) {
  EXPECT_EQ(cpu_list_text({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(cpu_list_text({5}), "5");
  EXPECT_EQ(cpu_list_text({}), "");
  EXPECT_EQ(cpu_list_text({3, 1, 2, 2}), "1-3");
  ASSERT_TRUE(process_cpus()) << process_cpus().why();
  EXPECT_FALSE(process_cpus()->empty());
}

TEST(Inventory, RecordLineKeepsTheContractKeys) {
  const auto j = to_json(read("h200-vm", test::fake_h200_vm()));
  EXPECT_EQ(j["type"], "inventory");
  for (const char* key : {"rank", "host", "node", "local_rank", "gpus", "nics", "paths"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const auto& p : j["paths"]) {
    for (const char* key : {"scope", "class", "peak_gbps", "basis"}) EXPECT_TRUE(p.contains(key)) << key;
    EXPECT_EQ(p["peak_gbps"].is_null(), p.contains("unknown_reason"));
  }
  EXPECT_EQ(j["gpus"][0]["pcie"]["gen"], 5);
  EXPECT_EQ(j["gpus"][0]["memory_bytes"], 150754820096ull);
  EXPECT_TRUE(j["gpus"][0]["numa_node"].is_null());
  EXPECT_TRUE(j["gpus"][0]["unknown"].contains("numa_node"));
  EXPECT_TRUE(j["nics"][0]["rate_gbit"].is_null());
  EXPECT_TRUE(j["nics"][0]["unknown"].contains("rate_gbit"));
}

}  // namespace
}  // namespace fb::topo
