// The node's GPUs: from NVML when the driver answers, else from the PCI
// devices in sysfs (so a node whose driver is broken still shows its GPUs,
// with the reason their details are unknown).
#include <fmt/format.h>

#include "fabricbench/topo/spec.hpp"
#include "topo_internal.hpp"

namespace fb::topo {
namespace {

constexpr const char* kNvidiaVendor = "0x10de";

// NUMA node, CPU list, place in the PCI tree: sysfs knows them, NVML's
// answers for these describe the same files.
void add_sysfs_facts(const Sysfs& sysfs, Gpu& g) {
  if (!g.bus_id) {
    g.place = Fact<PciPlace>::unknown(g.bus_id.why());
    g.numa_node = Fact<int>::unknown(g.bus_id.why());
    g.cpu_affinity = Fact<std::string>::unknown(g.bus_id.why());
    return;
  }
  g.place = pci_place_of_bus_id(sysfs, *g.bus_id);
  g.numa_node = g.place ? g.place->numa_node : Fact<int>::unknown(g.place.why());
  g.cpu_affinity = sysfs.read("sys/bus/pci/devices/" + *g.bus_id + "/local_cpulist");
}

template <typename T>
Fact<int> as_int(const Fact<T>& f) {
  return f ? Fact<int>(static_cast<int>(*f)) : Fact<int>::unknown(f.why());
}

// NVML's view of the link (the GPU reads its own link registers, which also
// works inside virtual machines); sysfs's where NVML does not answer.
PcieLink nvml_pcie_link(const Sysfs& sysfs, Nvml& nvml, unsigned i, const Fact<std::string>& bus_id) {
  PcieLink l;
  l.source = "nvml";
  l.gen = as_int(nvml.pcie_gen_current(i));
  l.width = as_int(nvml.pcie_width_current(i));
  l.max_gen = as_int(nvml.pcie_gen_max(i));
  l.max_width = as_int(nvml.pcie_width_max(i));
  l.device_max_gen = as_int(nvml.pcie_gen_device_max(i));
  if (l.gen && l.width && l.max_gen && l.max_width) {
    if (!l.device_max_gen && bus_id) l.device_max_gen = read_pcie_link(sysfs, *bus_id).device_max_gen;
    return believable_max(l);
  }
  return bus_id ? read_pcie_link(sysfs, *bus_id) : l;
}

std::vector<Gpu> nvml_gpus(const Sysfs& sysfs, Nvml& nvml, unsigned count, const std::vector<long>& job_pids) {
  std::vector<Gpu> gpus(count);
  std::vector<std::string> bus_ids(count);
  for (unsigned i = 0; i < count; ++i) {
    Gpu& g = gpus[i];
    g.index = static_cast<int>(i);
    g.model = nvml.name(i);
    g.uuid = nvml.uuid(i);
    const auto raw_bus = nvml.pci_bus_id(i);
    g.bus_id = raw_bus ? sysfs_bus_id(*raw_bus) : raw_bus;
    if (g.bus_id) bus_ids[i] = *g.bus_id;
    g.memory_bytes = nvml.memory_total_bytes(i);
    const auto arch = nvml.architecture(i);
    g.architecture = arch ? Fact<std::string>(arch_name(*arch)) : Fact<std::string>::unknown(arch.why());
    g.pstate = nvml.performance_state(i);
    g.pcie = nvml_pcie_link(sysfs, nvml, i, g.bus_id);
    add_sysfs_facts(sysfs, g);
    g.sharing = read_gpu_sharing(sysfs, nvml, i, job_pids);
    g.fabric = nvml.fabric(i);
  }
  for (unsigned i = 0; i < count; ++i) {
    const auto arch = nvml.architecture(i);
    gpus[i].nvlink = read_nvlinks(nvml, i, arch, bus_ids);
  }
  return gpus;
}

std::vector<Gpu> sysfs_gpus(const Sysfs& sysfs, const std::string& why) {
  std::vector<Gpu> gpus;
  for (const auto& bus : sysfs.list("sys/bus/pci/devices")) {
    const std::string dev = "sys/bus/pci/devices/" + bus;
    if (!is_nvidia_gpu_function(sysfs, bus)) continue;
    Gpu g;
    g.index = static_cast<int>(gpus.size());
    const auto device = sysfs.read(dev + "/device");
    const std::string unknown = fmt::format("{} (PCI device 10de:{})", why, device ? device->substr(2) : "?");
    g.model = g.uuid = g.architecture = Fact<std::string>::unknown(unknown);
    g.memory_bytes = Fact<std::uint64_t>::unknown(why);
    g.pstate = Fact<unsigned>::unknown(why);
    g.bus_id = bus;
    g.pcie = read_pcie_link(sysfs, bus);
    g.nvlink.present = g.nvlink.generation = Fact<int>::unknown(why);
    g.sharing.users = Fact<std::vector<GpuUser>>::unknown(why);
    g.sharing.compute_mode = Fact<ComputeMode>::unknown(why);
    g.sharing.mig = Fact<bool>::unknown(why);
    g.fabric = Fact<GpuFabric>::unknown(why);
    add_sysfs_facts(sysfs, g);
    gpus.push_back(std::move(g));
  }
  return gpus;
}

}  // namespace

std::vector<Gpu> read_gpus(const Sysfs& sysfs, Nvml& nvml, const std::vector<long>& job_pids) {
  std::string why = nvml.unavailable_reason();
  if (why.empty()) {
    const auto count = nvml.device_count();
    if (count) {
      auto gpus = nvml_gpus(sysfs, nvml, *count, job_pids);
      for (auto& g : gpus) {
        g.flags = pcie_flags(g.pcie, g.pstate);
        for (auto& f : nvlink_flags(g.nvlink)) g.flags.push_back(std::move(f));
        for (auto& f : sharing_flags(g.sharing)) g.flags.push_back(std::move(f));
      }
      add_fabric_flags(gpus);
      return gpus;
    }
    why = count.why();
  }
  auto gpus = sysfs_gpus(sysfs, why);
  for (auto& g : gpus) g.flags = pcie_flags(g.pcie, g.pstate);
  return gpus;
}

bool is_nvidia_gpu_function(const Sysfs& sysfs, const std::string& bus) {
  const std::string dev = "sys/bus/pci/devices/" + bus;
  const auto vendor = sysfs.read(dev + "/vendor");
  const auto cls = sysfs.read(dev + "/class");
  return vendor && *vendor == kNvidiaVendor && cls && cls->starts_with("0x03");
}

}  // namespace fb::topo
