// What `fabricbench diagnose` reads while a training job runs: per GPU a
// series of NVML readings, per NIC its byte counters, the job's process and
// its iteration times. Every reading is a Fact: a figure NVML (or /proc, or
// the log) could not give says why. The series are plain data, so the
// verdict (diagnose/verdict.hpp) is a pure function of them and runs the same
// on a live node, on a recorded series (--replay) and in tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricbench/topo/fact.hpp"

namespace fb::diagnose {

using topo::Fact;

// One reading of one GPU, `t_s` seconds into the window.
struct GpuSample {
  double t_s = 0;
  Fact<double> sm_util_pct;        // NVML "gpu": time a kernel ran, NCCL's kernels included
  Fact<double> mem_util_pct;       // NVML "memory": time device memory was read or written
  Fact<double> memory_used_bytes;  // allocated device memory (the framework's cache included)
  Fact<double> pcie_tx_gbps;       // GB/s over NVML's 20 ms window
  Fact<double> pcie_rx_gbps;
  Fact<double> nvlink_tx_kib;  // cumulative since the driver loaded, all links
  Fact<double> nvlink_rx_kib;
  Fact<double> sm_clock_mhz;
  Fact<std::uint64_t> clock_reasons;  // topo::clock_reason bits
  Fact<double> power_w;
  Fact<double> temperature_c;
};

// What stays put during the window.
struct GpuInfo {
  int index = 0;  // NVML's
  Fact<std::string> model;
  Fact<std::string> bus_id;
  Fact<double> memory_total_bytes;
  Fact<double> max_sm_clock_mhz;
  Fact<double> power_limit_w;
  Fact<double> nvlink_peak_gbps;  // per direction, active links x their rate (topo's spec)
};

struct GpuSeries {
  GpuInfo info;
  std::vector<GpuSample> samples;
};

struct NicSample {
  double t_s = 0;
  Fact<double> tx_bytes;  // cumulative (Ethernet statistics; RDMA port_xmit_data x 4)
  Fact<double> rx_bytes;
};

struct NicSeries {
  std::string name;  // "mlx5_0:1", "eth0"
  std::string kind;  // IB, RoCE, Ethernet
  Fact<double> peak_gbps;  // per direction, from its rate
  std::vector<NicSample> samples;
};

// The job's process (--pid) and its descendants (data-loader workers).
struct ProcessSample {
  double t_s = 0;
  bool alive = false;
  Fact<double> cpu_s;  // user + system CPU seconds of the process and its live descendants
  int processes = 0;   // the process and its descendants
};

struct ProcessSeries {
  int pid = 0;
  std::string name;   // comm
  std::string error;  // "" when the process was found at the start
  std::vector<ProcessSample> samples;
};

// Iteration times from the job's log (--iter-log).
struct IterSeries {
  std::string source;  // the file
  std::string format;  // megatron, deepspeed, tqdm, key, regex
  std::string unit;    // "s" per iteration, or "s/sample" (DeepSpeed's samples per second, inverted)
  std::vector<double> values;
  std::string note;   // which part of the log was read
  std::string error;  // "" when read
};

// Everything one node read during one window.
struct NodeSamples {
  int node = 0;
  std::string host;
  double window_s = 0;
  double interval_s = 0;
  std::string gpu_reason;  // why there are no GPU series ("" when NVML answered)
  std::vector<GpuSeries> gpus;
  std::vector<NicSeries> nics;
  std::optional<ProcessSeries> process;
  std::optional<IterSeries> iterations;
  std::vector<std::string> notes;  // one message per source that failed (printed as they happen)
};

}  // namespace fb::diagnose
