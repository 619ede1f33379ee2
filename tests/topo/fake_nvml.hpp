// NVML's answers from a table, behind the same interface the inventory asks:
// GPUs, their PCIe links and NVLink links, and calls made to fail on purpose.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fabricbench/topo/nvml.hpp"

namespace fb::test {

struct FakeLink {
  bool active = true;
  unsigned version = 6;  // nvmlNvlinkVersion_t 4.0
  std::string remote_bus_id = "00000000:05:00.0";
  topo::NvLinkEnd end = topo::NvLinkEnd::nvswitch;
};

// What a GPU does now, for the sampling calls; tests change it between samples.
struct FakeActivity {
  topo::Utilization utilization{0, 0};
  std::uint64_t memory_used_bytes = 1ull << 30;
  unsigned pcie_tx_kbps = 0, pcie_rx_kbps = 0;
  std::uint64_t nvlink_tx_kib = 0, nvlink_rx_kib = 0;  // cumulative; answered only with links
  unsigned sm_clock_mhz = 1980, max_sm_clock_mhz = 1980;
  unsigned mem_clock_mhz = 2619, max_mem_clock_mhz = 2619;
  std::uint64_t clock_reasons = topo::clock_reason::gpu_idle;
  unsigned power_mw = 70000, power_limit_mw = 700000;
  unsigned temperature_c = 35;
};

struct FakeGpu {
  std::string name = "NVIDIA H100 80GB HBM3";
  std::string uuid;
  std::string bus_id;                           // NVML's form: "00000000:1A:00.0"
  std::uint64_t memory_bytes = 85520809984ull;  // 81559 MiB
  unsigned arch = 9;                            // Hopper
  unsigned pstate = 0;
  unsigned gen = 5, width = 16, max_gen = 5, max_width = 16, device_max_gen = 5;
  std::vector<FakeLink> links;    // none: the GPU has no NVLink (NVML: not supported)
  FakeActivity now;
  std::vector<topo::GpuProcess> processes;  // compute contexts on it
  topo::ComputeMode compute_mode = topo::ComputeMode::shared;
  bool mig = false;
  topo::GpuFabric fabric;         // default: not a multi-node NVLink GPU (state not_supported)
  std::set<std::string> failing;  // methods that answer an NVML error
  // Error and throttle counters now; one not here answers NOT_SUPPORTED.
  std::map<topo::GpuCounter, std::uint64_t> counters;
};

class FakeNvml final : public topo::Nvml {
 public:
  std::string reason;  // non-empty: NVML "did not load"
  std::string driver = "580.159.04";
  std::string nvml = "13.580.159.04";
  int cuda_driver = 13000;
  std::vector<FakeGpu> gpus;

  std::string unavailable_reason() const override { return reason; }
  topo::Fact<std::string> driver_version() override { return sys(driver); }
  topo::Fact<std::string> nvml_version() override { return sys(nvml); }
  topo::Fact<int> cuda_driver_version() override { return sys(cuda_driver); }
  topo::Fact<unsigned> device_count() override { return sys(static_cast<unsigned>(gpus.size())); }
  topo::Fact<std::string> name(unsigned i) override { return ask(i, "name", &FakeGpu::name); }
  topo::Fact<std::string> uuid(unsigned i) override { return ask(i, "uuid", &FakeGpu::uuid); }
  topo::Fact<std::string> pci_bus_id(unsigned i) override { return ask(i, "pci_bus_id", &FakeGpu::bus_id); }
  topo::Fact<std::uint64_t> memory_total_bytes(unsigned i) override { return ask(i, "memory", &FakeGpu::memory_bytes); }
  topo::Fact<unsigned> architecture(unsigned i) override { return ask(i, "architecture", &FakeGpu::arch); }
  topo::Fact<unsigned> performance_state(unsigned i) override { return ask(i, "pstate", &FakeGpu::pstate); }
  topo::Fact<unsigned> pcie_gen_current(unsigned i) override { return ask(i, "pcie", &FakeGpu::gen); }
  topo::Fact<unsigned> pcie_width_current(unsigned i) override { return ask(i, "pcie", &FakeGpu::width); }
  topo::Fact<unsigned> pcie_gen_max(unsigned i) override { return ask(i, "pcie", &FakeGpu::max_gen); }
  topo::Fact<unsigned> pcie_width_max(unsigned i) override { return ask(i, "pcie", &FakeGpu::max_width); }
  topo::Fact<unsigned> pcie_gen_device_max(unsigned i) override { return ask(i, "pcie", &FakeGpu::device_max_gen); }
  topo::Fact<bool> nvlink_active(unsigned i, unsigned l) override { return link(i, l, &FakeLink::active); }
  topo::Fact<unsigned> nvlink_version(unsigned i, unsigned l) override { return link(i, l, &FakeLink::version); }
  topo::Fact<std::string> nvlink_remote_bus_id(unsigned i, unsigned l) override {
    return link(i, l, &FakeLink::remote_bus_id);
  }
  topo::Fact<topo::NvLinkEnd> nvlink_remote_type(unsigned i, unsigned l) override { return link(i, l, &FakeLink::end); }

  topo::Fact<topo::Utilization> utilization(unsigned i) override {
    return activity(i, "utilization", &FakeActivity::utilization);
  }
  topo::Fact<std::uint64_t> memory_used_bytes(unsigned i) override {
    return activity(i, "memory", &FakeActivity::memory_used_bytes);
  }
  topo::Fact<unsigned> pcie_throughput_kbps(unsigned i, topo::Direction d) override {
    return activity(i, "pcie_throughput",
                    d == topo::Direction::tx ? &FakeActivity::pcie_tx_kbps : &FakeActivity::pcie_rx_kbps);
  }
  topo::Fact<std::uint64_t> nvlink_data_kib(unsigned i, topo::Direction d) override {
    if (i < gpus.size() && gpus[i].links.empty())
      return topo::Fact<std::uint64_t>::unknown("NVLink throughput field 138: Not Supported (NVML error 3)");
    return activity(i, "nvlink_throughput",
                    d == topo::Direction::tx ? &FakeActivity::nvlink_tx_kib : &FakeActivity::nvlink_rx_kib);
  }
  topo::Fact<unsigned> clock_mhz(unsigned i, topo::ClockDomain d) override {
    return activity(i, "clock",
                    d == topo::ClockDomain::sm ? &FakeActivity::sm_clock_mhz : &FakeActivity::mem_clock_mhz);
  }
  topo::Fact<unsigned> max_clock_mhz(unsigned i, topo::ClockDomain d) override {
    return activity(i, "max_clock",
                    d == topo::ClockDomain::sm ? &FakeActivity::max_sm_clock_mhz : &FakeActivity::max_mem_clock_mhz);
  }
  topo::Fact<std::uint64_t> clock_reasons(unsigned i) override {
    return activity(i, "clock_reasons", &FakeActivity::clock_reasons);
  }
  topo::Fact<unsigned> power_mw(unsigned i) override { return activity(i, "power", &FakeActivity::power_mw); }
  topo::Fact<unsigned> power_limit_mw(unsigned i) override {
    return activity(i, "power_limit", &FakeActivity::power_limit_mw);
  }
  topo::Fact<unsigned> temperature_c(unsigned i) override {
    return activity(i, "temperature", &FakeActivity::temperature_c);
  }
  topo::Fact<std::vector<topo::GpuProcess>> compute_processes(unsigned i) override {
    return ask(i, "processes", &FakeGpu::processes);
  }
  topo::Fact<topo::ComputeMode> compute_mode(unsigned i) override {
    return ask(i, "compute_mode", &FakeGpu::compute_mode);
  }
  topo::Fact<bool> mig_enabled(unsigned i) override { return ask(i, "mig", &FakeGpu::mig); }
  topo::Fact<topo::GpuFabric> fabric(unsigned i) override { return ask(i, "fabric", &FakeGpu::fabric); }
  topo::Fact<std::uint64_t> gpu_counter(unsigned i, topo::GpuCounter c) override {
    const auto all = ask(i, "gpu_counter", &FakeGpu::counters);
    if (!all) return topo::Fact<std::uint64_t>::unknown(all.why());
    const auto it = all->find(c);
    if (it == all->end()) return topo::Fact<std::uint64_t>::unknown("Not Supported (NVML error 3)");
    return it->second;
  }

 private:
  template <typename T>
  topo::Fact<T> sys(const T& v) const {
    if (!reason.empty()) return topo::Fact<T>::unknown(reason);
    return v;
  }
  template <typename T>
  topo::Fact<T> ask(unsigned i, const char* what, T FakeGpu::*field) const {
    if (!reason.empty()) return topo::Fact<T>::unknown(reason);
    if (i >= gpus.size()) return topo::Fact<T>::unknown("Invalid Argument (NVML error 2)");
    if (gpus[i].failing.count(what))
      return topo::Fact<T>::unknown(std::string(what) + ": Unknown Error (NVML error 999)");
    return gpus[i].*field;
  }
  template <typename T>
  topo::Fact<T> activity(unsigned i, const char* what, T FakeActivity::*field) const {
    if (!reason.empty()) return topo::Fact<T>::unknown(reason);
    if (i >= gpus.size()) return topo::Fact<T>::unknown("Invalid Argument (NVML error 2)");
    if (gpus[i].failing.count(what))
      return topo::Fact<T>::unknown(std::string(what) + ": Unknown Error (NVML error 999)");
    return gpus[i].now.*field;
  }
  template <typename T>
  topo::Fact<T> link(unsigned i, unsigned l, T FakeLink::*field) const {
    if (!reason.empty()) return topo::Fact<T>::unknown(reason);
    if (i >= gpus.size() || l >= gpus[i].links.size()) return topo::Fact<T>::unknown("Not Supported (NVML error 3)");
    return gpus[i].links[l].*field;
  }
};

// Fakes matching the fixture trees in tests/topo/fixtures.
FakeNvml fake_hgx_h100();   // hgx-h100-8gpu-8ndr: 8 H100, 18 NVLink4 links each to NVSwitches
FakeNvml fake_roce_l40s();  // roce-2gpu: 2 L40S, Gen4 x16, no NVLink
FakeNvml fake_degraded();  // degraded-4gpu: GPU2 at Gen4 x8 under load, GPU1 with links 4 and 9 down, GPU0 idle at Gen1
FakeNvml fake_h200_vm();   // h200-vm: 1 H200, Gen5 x16, no NVLink
FakeNvml fake_efa_2gpu();  // efa-2gpu: 2 H100, each with two EFA devices behind its PCIe switch
// One GB200 NVL72 compute tray: 4 GPUs in NVLink domain `cluster_uuid`/`clique`,
// registration completed (read against the hgx-h100-8gpu-8ndr tree's first 4 GPUs).
FakeNvml fake_gb200_tray(const std::string& cluster_uuid, unsigned clique);

}  // namespace fb::test
