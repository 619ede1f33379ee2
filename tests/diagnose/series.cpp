#include "series.hpp"

namespace fb::test {

diagnose::GpuSeries h100_series(const Activity& a, int samples, int index) {
  diagnose::GpuSeries s;
  s.info.index = index;
  s.info.model = "NVIDIA H100 80GB HBM3";
  s.info.bus_id = "0000:1a:00.0";
  s.info.memory_total_bytes = 80.0 * (1ull << 30);
  s.info.max_sm_clock_mhz = 1980.0;
  s.info.power_limit_w = 700.0;
  s.info.nvlink_peak_gbps = 450.0;
  double kib = 1e9;  // the counters start where the driver left them
  for (int i = 0; i < samples; ++i) {
    diagnose::GpuSample x;
    x.t_s = 0.5 * i;
    x.sm_util_pct = a.sm_util_pct;
    x.mem_util_pct = a.mem_util_pct;
    x.memory_used_bytes = a.memory_used_gib * (1ull << 30);
    x.pcie_tx_gbps = 0.1;
    x.pcie_rx_gbps = 0.2;
    x.nvlink_tx_kib = kib;
    x.nvlink_rx_kib = kib;
    kib += a.nvlink_gbps * 1e9 * 0.5 / 1024.0;
    x.sm_clock_mhz = a.sm_clock_mhz;
    x.clock_reasons = a.reasons;
    x.power_w = a.power_w;
    x.temperature_c = a.temperature_c;
    s.samples.push_back(x);
  }
  return s;
}

diagnose::IterSeries iterations(double median_s, double wobble, int count) {
  diagnose::IterSeries s;
  s.source = "train.log";
  s.format = "megatron";
  s.unit = "s";
  for (int i = 0; i < count; ++i) s.values.push_back(median_s * (1 + (i % 2 ? wobble : -wobble)));
  return s;
}

diagnose::NodeSamples node_of(std::vector<diagnose::GpuSeries> gpus) {
  diagnose::NodeSamples n;
  n.host = "gpu-node-1";
  n.window_s = 10;
  n.interval_s = 0.5;
  n.gpus = std::move(gpus);
  return n;
}

}  // namespace fb::test
