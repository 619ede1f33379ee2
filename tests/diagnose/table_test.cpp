// The diagnosis table: fixed columns one space apart, host and model cut
// bare, the node's row ending in words, the verdicts and thresholds under it.
#include <gtest/gtest.h>

#include "fabricbench/diagnose/report.hpp"

namespace fb::diagnose {
namespace {

DiagnosisLine line(const char* level, int node, const char* host, const char* verdict) {
  DiagnosisLine l;
  l.level = level;
  l.node = node;
  l.host = host;
  l.verdict = verdict;
  l.reason = "the reason";
  return l;
}

std::vector<DiagnosisLine> sample() {
  DiagnosisLine gpu = line("gpu", 0, "gpu-node-0123456789", "communication_bound");
  gpu.gpu = 3;
  gpu.gpu_model = "NVIDIA H100 80GB HBM3 PCIe";
  DiagnosisGpuFigures g;
  g.sm_util_pct = 12;
  g.mem_util_pct = 40;
  g.pcie_rx_gbps = 1.25;
  g.nvlink_busy_pct = 88;
  g.sm_clock_pct = 100;
  g.throttled_pct = 0;
  g.power_pct = 61;
  g.temperature_max_c = 71;
  gpu.gpu_figures = g;
  DiagnosisLine busy = line("node", 0, "gpu-node-0123456789", "communication_bound");
  DiagnosisNodeFigures n;
  n.nic = "mlx5_0";
  n.nic_busy_pct = 80;
  busy.node_figures = n;
  DiagnosisLine idle = line("node", 1, "n2", "idle");
  idle.node_figures = DiagnosisNodeFigures{};
  return {gpu, busy, idle};
}

TEST(DiagnosisTable, FixedColumnsWithTheNodeRowInWords) {
  const Thresholds t;
  const std::string out = format_table(sample(), t);
  const std::string table = out.substr(0, out.find("\n\n") + 1);
  EXPECT_EQ(table,
            "node  host             gpu  model                  verdict                sm%  mem%  used%  pcie_rx  "
            "nvlink%  clock%   thr% power%   temp\n"
            "0     gpu-node-0123456 3    NVIDIA H100 80GB HBM3  communication_bound     12    40      ?     1.25  "
            "     88     100      0     61     71\n"
            "0     gpu-node-0123456 all  (node)                 communication_bound  NIC mlx5_0 80% of its peak;\n"
            "1     n2               all  (node)                 idle\n");
  EXPECT_NE(out.find("\n\ngpu-node-0123456789 GPU 3: "), std::string::npos) << out;
  EXPECT_NE(out.find("\nn2 node: "), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("\n\n" + describe(t) + "\n")) << out;
}

}  // namespace
}  // namespace fb::diagnose
