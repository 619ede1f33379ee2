// Helpers shared by the topo sources; not part of the public interface.
#pragma once

#include <string>
#include <vector>

#include "fabricbench/topo/inventory.hpp"

namespace fb::topo {

// "Gen5 x16" ("?" for an unknown part).
std::string pcie_text(const Fact<int>& gen, const Fact<int>& width);
// The stated maximum raised to the trained link where it is below it.
PcieLink believable_max(PcieLink link);
// Links trained below their maximum, slots that hold a device back.
std::vector<std::string> pcie_flags(const PcieLink& link, const Fact<unsigned>& pstate);

// The NVLink links of NVML GPU `gpu`; peers named "GPU<index>" by matching
// their bus ids against `gpu_bus_ids` (sysfs form, by NVML index).
NvLinks read_nvlinks(Nvml& nvml, unsigned gpu, const Fact<unsigned>& arch, const std::vector<std::string>& gpu_bus_ids);
std::vector<std::string> nvlink_flags(const NvLinks& links);
// "NVLink4 x18"
std::string nvlink_text(const NvLinks& links);

// Flags GPUs of a node whose NVLink fabric registration is not completed or
// whose NVLink domain differs from most of the node's (gpu_fabric.cpp).
void add_fabric_flags(std::vector<Gpu>& gpus);

// Whether PCI function `bus` (sysfs/bus/pci/devices) is an NVIDIA GPU:
// vendor 0x10de, class 0x03 (display: VGA 0x0300, 3D 0x0302).
bool is_nvidia_gpu_function(const Sysfs& sysfs, const std::string& bus);

// CUDA's version encoding, 1000 * major + 10 * minor, as "13.0".
std::string cuda_version_text(int version);

}  // namespace fb::topo
