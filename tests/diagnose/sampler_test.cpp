// The sampler against the fake NVML (tests/topo/fake_nvml.hpp), a sysfs tree
// made here with NIC counters that move between readings, and /proc.
#include "fabricbench/diagnose/sampler.hpp"

#include <gtest/gtest.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "fabricbench/diagnose/report.hpp"
#include "fake_nvml.hpp"

namespace fb::diagnose {
namespace {

namespace fs = std::filesystem;

class Tree {
 public:
  Tree() : root_(fs::temp_directory_path() / ("fb_diag_sysfs_" + std::to_string(getpid()))) {
    fs::remove_all(root_);
    const fs::path dev = root_ / "sys/devices/pci0000:00/0000:00:03.0/net/eth0";
    fs::create_directories(dev / "statistics");
    write(dev / "type", "1");
    write(dev / "operstate", "up");
    write(dev / "speed", "10000");  // 10 Gb/s: 1.25 GB/s
    write(dev / "mtu", "1500");
    fs::create_directories(root_ / "sys/class/net");
    fs::create_directory_symlink("../../devices/pci0000:00/0000:00:03.0/net/eth0", root_ / "sys/class/net/eth0");
    const fs::path port = root_ / "sys/class/infiniband/mlx5_0/ports/1";
    fs::create_directories(port / "counters");
    write(port / "state", "4: ACTIVE");
    write(port / "phys_state", "5: LinkUp");
    write(port / "link_layer", "InfiniBand");
    write(port / "rate", "400 Gb/sec (4X NDR)");
    counters(0, 0);
  }
  ~Tree() { fs::remove_all(root_); }
  // Ethernet bytes and RDMA words (bytes / 4) sent so far.
  void counters(double eth_bytes, double ib_bytes) {
    const fs::path stats = root_ / "sys/devices/pci0000:00/0000:00:03.0/net/eth0/statistics";
    write(stats / "tx_bytes", std::to_string(static_cast<long long>(eth_bytes)));
    write(stats / "rx_bytes", "0");
    const fs::path c = root_ / "sys/class/infiniband/mlx5_0/ports/1/counters";
    write(c / "port_xmit_data", std::to_string(static_cast<long long>(ib_bytes / 4)));
    write(c / "port_rcv_data", "not-a-number");
  }
  topo::Sysfs sysfs() const { return topo::Sysfs(root_); }

 private:
  static void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text << "\n"; }
  fs::path root_;
};

const Thresholds kSamplerThresholds;

TEST(Sampler, ReadsEveryGpuAndNicAndTheirFiguresFollow) {
  test::FakeNvml nvml = test::fake_hgx_h100();
  nvml.gpus.resize(2);
  Tree tree;
  const topo::Sysfs sysfs = tree.sysfs();
  Sampler sampler(nvml, sysfs);
  for (int i = 0; i < 5; ++i) {
    for (auto& g : nvml.gpus) {
      g.now.utilization = {97, 35};
      g.now.memory_used_bytes = 60ull << 30;
      g.now.nvlink_tx_kib = 1000000 + static_cast<std::uint64_t>(i) * 100000000ull;  // 100e6 KiB per second
      g.now.nvlink_rx_kib = 5;
      g.now.pcie_rx_kbps = 2000000;  // 2 GB/s
      g.now.clock_reasons = 0;
      g.now.power_mw = 600000;
      g.now.temperature_c = 60 + static_cast<unsigned>(i);
    }
    tree.counters(1e9 * i, 40e9 * i);  // 1 GB/s over Ethernet, 40 GB/s over IB
    sampler.sample(1.0 * i);
  }
  const NodeSamples node = sampler.samples();
  EXPECT_EQ(node.gpu_reason, "");
  ASSERT_EQ(node.gpus.size(), 2u);
  ASSERT_EQ(node.gpus[0].samples.size(), 5u);
  EXPECT_EQ(*node.gpus[0].info.model, "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(*node.gpus[0].info.power_limit_w, 700.0);
  EXPECT_GT(*node.gpus[0].info.nvlink_peak_gbps, 400.0);  // NVLink4 x18 from topo's spec
  const GpuFigures g = gpu_figures(node.gpus[1], kSamplerThresholds);
  EXPECT_DOUBLE_EQ(*g.sm_util_pct, 97);
  EXPECT_DOUBLE_EQ(*g.pcie_rx_gbps, 2.0);
  EXPECT_NEAR(*g.nvlink_tx_gbps, 100e6 * 1024 / 1e9, 1e-6);
  EXPECT_DOUBLE_EQ(*g.temperature_max_c, 64);
  EXPECT_NEAR(*g.power_pct, 100.0 * 600 / 700, 1e-9);
  ASSERT_EQ(node.nics.size(), 2u);  // the RDMA port and eth0
  const NodeFigures n = node_figures(node, kSamplerThresholds);
  EXPECT_EQ(n.nic, "mlx5_0:1");  // 40 of 50 GB/s beats 1 of 1.25
  EXPECT_NEAR(*n.nic_tx_gbps, 40.0, 1e-9);
  EXPECT_NEAR(*n.nic_busy_pct, 80.0, 1e-9);
  // Its receive counter does not parse: a note, once.
  const auto notes = node.notes;
  ASSERT_EQ(std::count_if(notes.begin(), notes.end(), [](const auto& t) { return t.find("mlx5_0:1") != t.npos; }), 1)
      << ::testing::PrintToString(notes);
}

TEST(Sampler, ACallThatFailsOnOneGpuIsANoteAndTheRestGoesOn) {
  test::FakeNvml nvml = test::fake_roce_l40s();
  nvml.gpus[1].failing = {"utilization", "temperature"};
  const topo::Sysfs sysfs("/nonexistent-root");
  Sampler sampler(nvml, sysfs);
  for (int i = 0; i < 4; ++i) {
    nvml.gpus[0].now.utilization = {10, 5};
    sampler.sample(0.5 * i);
  }
  auto notes = sampler.new_notes();
  ASSERT_EQ(notes.size(), 2u) << ::testing::PrintToString(notes);
  EXPECT_EQ(notes[0], "GPU 1: utilization unknown: utilization: Unknown Error (NVML error 999); its other figures go on");
  EXPECT_NE(notes[1].find("GPU 1: temperature unknown"), std::string::npos);
  EXPECT_TRUE(sampler.new_notes().empty());  // each once
  const auto lines = diagnose(sampler.samples(), kSamplerThresholds);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].verdict, "undetermined");  // 10%, memory 1 GiB of 46: no stated cause
  EXPECT_EQ(lines[1].verdict, "undetermined");
  EXPECT_NE(lines[1].reason.find("SM utilization unknown: utilization: Unknown Error"), std::string::npos)
      << lines[1].reason;
  // The L40S has no NVLink: its figure says so rather than failing.
  const auto& unknown = lines[0].unknown;
  const auto nvlink = std::find_if(unknown.begin(), unknown.end(), [](const auto& u) { return u.first == "nvlink_tx_gbps"; });
  ASSERT_NE(nvlink, unknown.end());
  EXPECT_NE(nvlink->second.find("NVLink"), std::string::npos) << nvlink->second;
  EXPECT_NE(lines[1].gpu_figures->power_w, std::nullopt);  // its other figures went on
}

TEST(Sampler, WithoutNvmlEveryGpuFigureIsUnknownWithTheReason) {
  test::FakeNvml nvml;
  nvml.reason = "NVML not loaded: libnvidia-ml.so.1: cannot open shared object file";
  const topo::Sysfs sysfs("/nonexistent-root");
  Sampler sampler(nvml, sysfs);
  sampler.sample(0);
  const NodeSamples node = sampler.samples();
  EXPECT_TRUE(node.gpus.empty());
  EXPECT_EQ(node.gpu_reason, nvml.reason);
  const auto lines = diagnose(node, kSamplerThresholds);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, "node");
  EXPECT_NE(lines[0].reason.find("GPU figures unknown: NVML not loaded"), std::string::npos) << lines[0].reason;
  ASSERT_FALSE(lines[0].unknown.empty());
  EXPECT_EQ(lines[0].unknown[0].first, "gpus");
}

TEST(Process, ThisProcessIsReadAndItsCpuTimeGrows) {
  std::vector<std::string> notes;
  ProcessReader reader(getpid());
  ASSERT_EQ(reader.error(), "");
  reader.sample(0, notes);
  // Burn 0.3 s of this thread's CPU time (not of wall time: on a loaded
  // machine 0.3 s of wall gave the thread 0.09 s of a core): the reading must
  // grow by it, in /proc's 10 ms ticks.
  timespec start{}, now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  volatile double x = 0;
  do {
    for (int i = 0; i < 100000; ++i) x = x + 1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9 < 0.3 &&
           std::chrono::steady_clock::now() < give_up);
  reader.sample(0.3, notes);
  const auto& s = reader.series().samples;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(s[1].alive);
  EXPECT_GE(*s[1].cpu_s - *s[0].cpu_s, 0.1);
  EXPECT_TRUE(notes.empty());
}

TEST(Process, APidThatIsNotRunningIsAClearMessage) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  waitpid(child, &status, 0);  // reaped: the pid runs nothing now
  ProcessReader reader(child);
  EXPECT_NE(reader.error().find("--pid " + std::to_string(child) + ": no such process running"), std::string::npos)
      << reader.error();
  EXPECT_NE(reader.error().find("the rest of the diagnosis goes on"), std::string::npos);
  std::vector<std::string> notes;
  reader.sample(0, notes);
  EXPECT_TRUE(reader.series().samples.empty());
}

TEST(Process, AProcessThatEndsDuringTheWindowIsNotedOnce) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  ProcessReader reader(child);
  ASSERT_EQ(reader.error(), "");
  std::vector<std::string> notes;
  reader.sample(0, notes);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  reader.sample(1, notes);
  reader.sample(2, notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("ended 1.0 s into the window"), std::string::npos) << notes[0];
  EXPECT_FALSE(reader.series().samples.back().alive);
}

}  // namespace
}  // namespace fb::diagnose
