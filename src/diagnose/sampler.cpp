// NVML and sysfs readings, once per call. NVML's units become the record's:
// KB/s to GB/s, milliwatts to watts.
#include "fabricbench/diagnose/sampler.hpp"

#include <fmt/format.h>

#include "fabricbench/topo/inventory.hpp"
#include "fabricbench/topo/spec.hpp"

namespace fb::diagnose {
namespace {

template <typename T>
Fact<double> as_double(const Fact<T>& f, double scale = 1.0) {
  if (!f) return Fact<double>::unknown(f.why());
  return static_cast<double>(*f) * scale;
}

// What NVML states once: the card, its limits and its NVLink peak.
GpuInfo gpu_info(topo::Nvml& nvml, const topo::Gpu& g) {
  GpuInfo info;
  info.index = g.index;
  info.model = g.model;
  info.bus_id = g.bus_id;
  info.memory_total_bytes = as_double(g.memory_bytes);
  const auto gpu = static_cast<unsigned>(g.index);
  info.max_sm_clock_mhz = as_double(nvml.max_clock_mhz(gpu, topo::ClockDomain::sm));
  info.power_limit_w = as_double(nvml.power_limit_mw(gpu), 1e-3);
  const auto peak = g.nvlink.total_gbps();
  if (!peak)
    info.nvlink_peak_gbps = Fact<double>::unknown(peak.why());
  else if (*peak <= 0)
    info.nvlink_peak_gbps = Fact<double>::unknown("no active NVLink links");
  else
    info.nvlink_peak_gbps = *peak;
  return info;
}

}  // namespace

Sampler::Sampler(topo::Nvml& nvml, const topo::Sysfs& sysfs, std::optional<int> pid, std::string proc_root)
    : nvml_(nvml), sysfs_(sysfs) {
  if (pid) {
    process_.emplace(*pid, std::move(proc_root));
    if (!process_->error().empty()) node_.notes.push_back(process_->error());
  }
  node_.gpu_reason = nvml.unavailable_reason();
  if (node_.gpu_reason.empty()) {
    for (const auto& g : topo::read_gpus(sysfs, nvml)) node_.gpus.push_back({gpu_info(nvml, g), {}});
    if (node_.gpus.empty()) node_.gpu_reason = "NVML answers but lists no GPU on this node";
  }
  for (const auto& nic : topo::read_nics(sysfs)) {
    if (!nic.up) continue;
    NicSeries s;
    s.name = nic.name;
    s.kind = nic.kind;
    s.peak_gbps = nic.rate_gbit ? Fact<double>(topo::gbit_to_gbps(*nic.rate_gbit))
                                : Fact<double>::unknown(nic.rate_gbit.why());
    if (nic.kind == "Ethernet") {
      nic_paths_tx_.push_back("sys/class/net/" + nic.name + "/statistics/tx_bytes");
      nic_paths_rx_.push_back("sys/class/net/" + nic.name + "/statistics/rx_bytes");
      nic_scale_.push_back(1.0);
    } else {
      // "mlx5_0:1": device and port. PortXmitData and PortRcvData count
      // octets divided by 4 (InfiniBand Architecture Specification 16.1.3.5,
      // named by the kernel's Documentation/infiniband/sysfs.txt).
      const auto colon = nic.name.rfind(':');
      const std::string base =
          "sys/class/infiniband/" + nic.name.substr(0, colon) + "/ports/" + nic.name.substr(colon + 1) + "/counters/";
      nic_paths_tx_.push_back(base + "port_xmit_data");
      nic_paths_rx_.push_back(base + "port_rcv_data");
      nic_scale_.push_back(4.0);
    }
    node_.nics.push_back(std::move(s));
  }
}

template <typename T>
Fact<double> Sampler::keep(const Fact<T>& f, int gpu, const char* what, double scale) {
  if (!f && noted_.insert(fmt::format("{}:{}", gpu, what)).second)
    node_.notes.push_back(fmt::format("GPU {}: {} unknown: {}; its other figures go on", gpu, what, f.why()));
  return as_double(f, scale);
}

void Sampler::sample_gpu(std::size_t i, double t_s) {
  GpuSeries& series = node_.gpus[i];
  const int index = series.info.index;
  const auto gpu = static_cast<unsigned>(index);
  GpuSample s;
  s.t_s = t_s;
  const auto util = nvml_.utilization(gpu);
  s.sm_util_pct = keep(util ? Fact<double>(util->gpu_pct) : Fact<double>::unknown(util.why()), index, "utilization");
  s.mem_util_pct = util ? Fact<double>(util->memory_pct) : Fact<double>::unknown(util.why());
  s.memory_used_bytes = keep(nvml_.memory_used_bytes(gpu), index, "memory used");
  s.pcie_tx_gbps = keep(nvml_.pcie_throughput_kbps(gpu, topo::Direction::tx), index, "PCIe throughput", 1e-6);
  s.pcie_rx_gbps = as_double(nvml_.pcie_throughput_kbps(gpu, topo::Direction::rx), 1e-6);
  if (series.info.nvlink_peak_gbps) {
    s.nvlink_tx_kib = keep(nvml_.nvlink_data_kib(gpu, topo::Direction::tx), index, "NVLink throughput");
    s.nvlink_rx_kib = as_double(nvml_.nvlink_data_kib(gpu, topo::Direction::rx));
  } else {
    s.nvlink_tx_kib = s.nvlink_rx_kib = Fact<double>::unknown(series.info.nvlink_peak_gbps.why());
  }
  s.sm_clock_mhz = keep(nvml_.clock_mhz(gpu, topo::ClockDomain::sm), index, "SM clock");
  const auto reasons = nvml_.clock_reasons(gpu);
  keep(reasons, index, "clock event reasons");
  s.clock_reasons = reasons;
  s.power_w = keep(nvml_.power_mw(gpu), index, "power", 1e-3);
  s.temperature_c = keep(nvml_.temperature_c(gpu), index, "temperature");
  series.samples.push_back(std::move(s));
}

void Sampler::sample_nics(double t_s) {
  for (std::size_t i = 0; i < node_.nics.size(); ++i) {
    NicSample s;
    s.t_s = t_s;
    for (auto [path, out] : {std::pair{&nic_paths_tx_[i], &s.tx_bytes}, std::pair{&nic_paths_rx_[i], &s.rx_bytes}}) {
      const auto v = sysfs_.read(*path);
      char* end = nullptr;
      const double n = v ? std::strtod(v->c_str(), &end) : 0.0;
      if (v && end && *end == '\0' && !v->empty())
        *out = n * nic_scale_[i];
      else
        *out = Fact<double>::unknown(v ? fmt::format("{}: '{}' is not a count", *path, *v) : v.why());
      if (!*out && noted_.insert("nic:" + node_.nics[i].name).second)
        node_.notes.push_back(fmt::format("NIC {}: counters unknown: {}", node_.nics[i].name, out->why()));
    }
    node_.nics[i].samples.push_back(std::move(s));
  }
}

void Sampler::sample(double t_s) {
  for (std::size_t i = 0; i < node_.gpus.size(); ++i) sample_gpu(i, t_s);
  sample_nics(t_s);
  if (process_) process_->sample(t_s, node_.notes);
}

std::vector<std::string> Sampler::new_notes() {
  std::vector<std::string> out(node_.notes.begin() + static_cast<std::ptrdiff_t>(reported_notes_), node_.notes.end());
  reported_notes_ = node_.notes.size();
  return out;
}

NodeSamples Sampler::samples() const {
  NodeSamples out = node_;
  if (process_) out.process = process_->series();
  return out;
}

}  // namespace fb::diagnose
