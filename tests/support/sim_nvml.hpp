// NVML's view of the device double's node (sim_devices.hpp), for tests only:
// never installed, never reachable from a flag. It answers topo::Nvml from
// the same SimNode fixture the backends run on, so what topo, the inventory,
// the GPU counters and the sharing checks say about a rank's GPU can be held
// against the GPU the backend placed it on.
//
// - NVML numbers every GPU of the node in PCI bus order, whatever a
//   process's CUDA_VISIBLE_DEVICES, and writes bus ids with an eight-digit
//   domain ("000000FB:10:00.0"; the double's CUDA spelling is "00FB:10:00.0").
// - NVLink: the fixture says every pair of an NVLink node is joined, not by
//   how many links or through which switch, so link k of a GPU is its direct
//   link to the k-th other GPU (remote type gpu); a PCIe node has no links.
// - Processes: the ranks holding each GPU, told by hold() (node_holders()
//   gathers them across the node's ranks: each rank's own SimDevices).
// - MIG off, compute mode default (the double lets any process open any
//   device), fabric not supported (no multi-node NVLink in the fixtures),
//   error and throttle counters 0 until raise() moves one.
// - UUIDs are the fixture's (SimGpu::uuid), the ones SimDevices reads a
//   CUDA_VISIBLE_DEVICES of UUIDs by.
// - What the fixture does not say (driver, PCIe link, clocks, power,
//   utilization...) answers unknown with that reason.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/topo/nvml.hpp"
#include "sim_devices.hpp"

namespace fb::test {

class SimNvml final : public topo::Nvml {
 public:
  explicit SimNvml(SimNode node);

  // `pid` has a context on node GPU `gpu` (an index into the fixture's gpus).
  void hold(int gpu, unsigned pid);
  // A counter of node GPU `gpu` goes up by `by` (an error on that GPU).
  void raise(int gpu, topo::GpuCounter counter, std::uint64_t by = 1);
  // NVML's index of node GPU `gpu`.
  unsigned index_of(int gpu) const;

  std::string unavailable_reason() const override { return {}; }
  topo::Fact<std::string> driver_version() override { return no<std::string>("a driver version"); }
  topo::Fact<std::string> nvml_version() override { return no<std::string>("an NVML version"); }
  topo::Fact<int> cuda_driver_version() override { return no<int>("a CUDA driver version"); }
  topo::Fact<unsigned> device_count() override { return static_cast<unsigned>(order_.size()); }

  topo::Fact<std::string> name(unsigned gpu) override;
  topo::Fact<std::string> uuid(unsigned gpu) override;
  topo::Fact<std::string> pci_bus_id(unsigned gpu) override;
  topo::Fact<std::uint64_t> memory_total_bytes(unsigned gpu) override;
  topo::Fact<unsigned> architecture(unsigned gpu) override;
  topo::Fact<unsigned> performance_state(unsigned gpu) override { return per_gpu<unsigned>(gpu, "a P-state"); }

  topo::Fact<unsigned> pcie_gen_current(unsigned gpu) override { return per_gpu<unsigned>(gpu, "a PCIe link"); }
  topo::Fact<unsigned> pcie_width_current(unsigned gpu) override { return per_gpu<unsigned>(gpu, "a PCIe link"); }
  topo::Fact<unsigned> pcie_gen_max(unsigned gpu) override { return per_gpu<unsigned>(gpu, "a PCIe link"); }
  topo::Fact<unsigned> pcie_width_max(unsigned gpu) override { return per_gpu<unsigned>(gpu, "a PCIe link"); }
  topo::Fact<unsigned> pcie_gen_device_max(unsigned gpu) override { return per_gpu<unsigned>(gpu, "a PCIe link"); }

  topo::Fact<bool> nvlink_active(unsigned gpu, unsigned link) override;
  topo::Fact<unsigned> nvlink_version(unsigned gpu, unsigned link) override;
  topo::Fact<std::string> nvlink_remote_bus_id(unsigned gpu, unsigned link) override;
  topo::Fact<topo::NvLinkEnd> nvlink_remote_type(unsigned gpu, unsigned link) override;

  topo::Fact<topo::Utilization> utilization(unsigned gpu) override {
    return per_gpu<topo::Utilization>(gpu, "a utilization");
  }
  topo::Fact<std::uint64_t> memory_used_bytes(unsigned gpu) override;
  topo::Fact<unsigned> pcie_throughput_kbps(unsigned gpu, topo::Direction) override {
    return per_gpu<unsigned>(gpu, "a PCIe throughput");
  }
  topo::Fact<std::uint64_t> nvlink_data_kib(unsigned gpu, topo::Direction) override {
    return per_gpu<std::uint64_t>(gpu, "an NVLink throughput");
  }
  topo::Fact<unsigned> clock_mhz(unsigned gpu, topo::ClockDomain) override { return per_gpu<unsigned>(gpu, "a clock"); }
  topo::Fact<unsigned> max_clock_mhz(unsigned gpu, topo::ClockDomain) override {
    return per_gpu<unsigned>(gpu, "a clock");
  }
  topo::Fact<std::uint64_t> clock_reasons(unsigned gpu) override {
    return per_gpu<std::uint64_t>(gpu, "clock event reasons");
  }
  topo::Fact<unsigned> power_mw(unsigned gpu) override { return per_gpu<unsigned>(gpu, "a power draw"); }
  topo::Fact<unsigned> power_limit_mw(unsigned gpu) override { return per_gpu<unsigned>(gpu, "a power limit"); }
  topo::Fact<unsigned> temperature_c(unsigned gpu) override { return per_gpu<unsigned>(gpu, "a temperature"); }

  topo::Fact<std::vector<topo::GpuProcess>> compute_processes(unsigned gpu) override;
  topo::Fact<topo::ComputeMode> compute_mode(unsigned gpu) override;
  topo::Fact<bool> mig_enabled(unsigned gpu) override;
  topo::Fact<topo::GpuFabric> fabric(unsigned gpu) override;
  topo::Fact<std::uint64_t> gpu_counter(unsigned gpu, topo::GpuCounter counter) override;

 private:
  // The fixture's GPU behind NVML index `gpu`, or nullptr (NVML: invalid argument).
  const SimGpu* at(unsigned gpu) const;
  // The node GPU a link of NVML GPU `gpu` reaches, or -1 where the link does not exist.
  int link_peer(unsigned gpu, unsigned link) const;
  template <typename T>
  topo::Fact<T> no(const char* what) const {
    return topo::Fact<T>::unknown(fmt_missing(what));
  }
  template <typename T>
  topo::Fact<T> per_gpu(unsigned gpu, const char* what) const {
    if (!at(gpu)) return topo::Fact<T>::unknown(kInvalid);
    return no<T>(what);
  }
  static std::string fmt_missing(const char* what);
  static constexpr const char* kInvalid = "Invalid Argument (NVML error 2)";

  SimNode node_;
  std::vector<int> order_;                        // NVML index -> node GPU, in PCI bus order
  std::map<int, std::vector<unsigned>> holders_;  // node GPU -> pids with a context on it
  std::map<std::pair<int, topo::GpuCounter>, std::uint64_t> raised_;
};

// The node's ranks' contexts, as NVML would list them: every rank of `node`
// (collective) tells its pid and the GPUs its SimDevices opened.
void node_holders(SimNvml& nvml, const SimDevices& devices, const Comm& node);

// A bus id as NVML writes it: an eight-digit upper-case domain.
std::string nvml_bus_id(const std::string& bus_id);

}  // namespace fb::test
