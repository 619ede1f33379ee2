// On a machine with an NVIDIA GPU: the real inventory holds sane values.
// Elsewhere every test skips and prints why.
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "fabricbench/backends/library_versions.hpp"
#include "fabricbench/topo/inventory.hpp"
#include "fabricbench/topo/report.hpp"
#include "fabricbench/version.hpp"
#include "process.hpp"

namespace fb::topo {
namespace {

class GpuTopo : public ::testing::Test {
 protected:
  void SetUp() override {
    nvml_ = load_nvml();
    if (const auto why = nvml_->unavailable_reason(); !why.empty()) GTEST_SKIP() << "no GPU here: " << why;
    const auto count = nvml_->device_count();
    if (!count || *count == 0) GTEST_SKIP() << "NVML loaded but sees no GPU: " << count.why();
    inv_ = read_inventory(Sysfs("/"), *nvml_, loaded_library_versions(), {0, 0, 0, "this", {}}, CudaView{});
  }
  std::unique_ptr<Nvml> nvml_;
  Inventory inv_;
};

TEST_F(GpuTopo, EveryGpuHasSaneFacts) {
  ASSERT_FALSE(inv_.gpus.empty());
  for (const auto& g : inv_.gpus) {
    ASSERT_TRUE(g.model) << g.model.why();
    EXPECT_NE(g.model->find("NVIDIA"), std::string::npos) << *g.model;
    ASSERT_TRUE(g.uuid) << g.uuid.why();
    EXPECT_EQ(g.uuid->rfind("GPU-", 0), 0u) << *g.uuid;
    ASSERT_TRUE(g.bus_id) << g.bus_id.why();
    EXPECT_TRUE(is_bus_id(*g.bus_id)) << *g.bus_id;
    ASSERT_TRUE(g.memory_bytes) << g.memory_bytes.why();
    EXPECT_GT(*g.memory_bytes, 1ull << 30);
    ASSERT_TRUE(g.pcie.max_gen) << g.pcie.max_gen.why();
    EXPECT_GE(*g.pcie.max_gen, 1);
    EXPECT_LE(*g.pcie.max_gen, 6);
    ASSERT_TRUE(g.pcie.max_width) << g.pcie.max_width.why();
    EXPECT_TRUE(*g.pcie.max_width == 1 || *g.pcie.max_width == 2 || *g.pcie.max_width == 4 || *g.pcie.max_width == 8 ||
                *g.pcie.max_width == 16 || *g.pcie.max_width == 32);
    ASSERT_TRUE(g.pcie.gen) << g.pcie.gen.why();
    EXPECT_LE(*g.pcie.gen, *g.pcie.max_gen);
    EXPECT_GT(*g.pcie.peak_gbps(), 0.0);
    ASSERT_TRUE(g.nvlink.present) << g.nvlink.present.why();
    if (g.nvlink.active > 0) {
      EXPECT_GT(*g.nvlink.total_gbps(), 0.0) << g.nvlink.total_gbps().why();
    }
  }
}

// The real driver answers the sharing calls through the declared ABI
// (nvml_abi.hpp): modes known, and a process list whose memory figures are
// believable (a struct of the wrong layout reads garbage there).
TEST_F(GpuTopo, EveryGpuSaysWhoElseUsesIt) {
  for (const auto& g : inv_.gpus) {
    EXPECT_TRUE(g.sharing.compute_mode) << g.sharing.compute_mode.why();
    EXPECT_TRUE(g.sharing.mig) << g.sharing.mig.why();
    ASSERT_TRUE(g.sharing.users) << g.sharing.users.why();
    for (const auto& u : *g.sharing.users) {
      EXPECT_GT(u.pid, 0u);
      if (u.used_memory_bytes) {
        EXPECT_LE(*u.used_memory_bytes, g.memory_bytes.value_or(~0ull)) << "pid " << u.pid;
      }
    }
    std::cout << "GPU" << g.index << ": " << g.sharing.users->size() << " processes, compute mode "
              << (g.sharing.compute_mode ? compute_mode_name(*g.sharing.compute_mode) : "?") << "\n";
  }
}

TEST_F(GpuTopo, SoftwareVersionsAreKnown) {
  EXPECT_TRUE(inv_.software.driver) << inv_.software.driver.why();
  EXPECT_TRUE(inv_.software.cuda_driver) << inv_.software.cuda_driver.why();
  if (kBuiltWithCuda) {
    EXPECT_TRUE(inv_.software.cuda_runtime) << inv_.software.cuda_runtime.why();
  }
}

TEST_F(GpuTopo, TheRanksGpuPathHasAPeakAndNoPathInventsOne) {
  ASSERT_TRUE(inv_.rank_gpu) << inv_.rank_gpu.why();
  bool gpu_path = false;
  for (const auto& p : inv_.paths) {
    if (p.scope == "intra" && (p.cls == "NVLink" || p.cls == "PCIe")) {
      gpu_path = true;
      ASSERT_TRUE(p.peak_gbps) << p.peak_gbps.why();
      EXPECT_GT(*p.peak_gbps, 10.0) << p.basis;  // any GPU link of this decade beats 10 GB/s
    }
    if (p.peak_gbps)
      EXPECT_GT(*p.peak_gbps, 0.0) << p.scope << " " << p.cls;
    else
      EXPECT_FALSE(p.peak_gbps.why().empty());
  }
  EXPECT_TRUE(gpu_path);
  // For whoever reads the test log on the GPU machine.
  const std::vector<json> lines{to_json(inv_)};
  std::cout << format_report(lines, find_differences(lines));
}

TEST_F(GpuTopo, TheCommandReportsTheGpu) {
  const auto r = test::run_process(std::string(FB_BINARY) + " topo");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(*inv_.gpus[0].model), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fb::topo
