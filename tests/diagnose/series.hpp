// Synthetic sample series for the verdict tests: a GPU doing one thing for a
// whole window, shaped as NVML reports it.
#pragma once

#include <cstdint>
#include <vector>

#include "fabricbench/diagnose/samples.hpp"
#include "fabricbench/topo/nvml.hpp"

namespace fb::test {

struct Activity {
  double sm_util_pct = 0;
  double mem_util_pct = 0;
  double memory_used_gib = 1;
  double nvlink_gbps = 0;  // per direction
  double sm_clock_mhz = 1980;
  std::uint64_t reasons = topo::clock_reason::gpu_idle;
  double power_w = 70;
  double temperature_c = 35;
};

// An H100 SXM (80 GiB, 1980 MHz, 700 W, NVLink4 x18 = 450 GB/s per direction)
// sampled every 0.5 s for `samples` readings.
diagnose::GpuSeries h100_series(const Activity& a, int samples = 20, int index = 0);

// Iteration times around `median_s`, alternating +-`wobble` of it.
diagnose::IterSeries iterations(double median_s, double wobble, int count = 40);

// One node holding `gpus`.
diagnose::NodeSamples node_of(std::vector<diagnose::GpuSeries> gpus);

}  // namespace fb::test
