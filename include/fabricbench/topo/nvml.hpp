// The NVIDIA Management Library, as the inventory asks it: one method per NVML
// call fabricbench uses, by GPU index instead of handle, each answering a
// Fact. The real one loads libnvidia-ml.so.1 at run time (never linked), so
// one binary runs on nodes with and without the NVIDIA driver; tests put a
// fake behind the same interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "fabricbench/topo/fact.hpp"

namespace fb::topo {

// What an NVLink link's far end is (NVML's nvmlIntNvLinkDeviceType_t).
enum class NvLinkEnd { gpu, ibm_npu, nvswitch, unknown };

class Nvml {
 public:
  virtual ~Nvml() = default;

  // "" when the library loaded and nvmlInit succeeded; else why it did not
  // (then every other call answers unknown with this reason).
  virtual std::string unavailable_reason() const = 0;

  virtual Fact<std::string> driver_version() = 0;
  virtual Fact<std::string> nvml_version() = 0;
  virtual Fact<int> cuda_driver_version() = 0;  // CUDA's encoding: 1000 * major + 10 * minor
  virtual Fact<unsigned> device_count() = 0;

  virtual Fact<std::string> name(unsigned gpu) = 0;
  virtual Fact<std::string> uuid(unsigned gpu) = 0;
  virtual Fact<std::string> pci_bus_id(unsigned gpu) = 0;  // as NVML writes it: "00000000:19:00.0"
  virtual Fact<std::uint64_t> memory_total_bytes(unsigned gpu) = 0;
  virtual Fact<unsigned> architecture(unsigned gpu) = 0;       // NVML_DEVICE_ARCH_*: 9 Hopper, 10 Blackwell
  virtual Fact<unsigned> performance_state(unsigned gpu) = 0;  // 0 (P0, full speed) .. 15

  virtual Fact<unsigned> pcie_gen_current(unsigned gpu) = 0;
  virtual Fact<unsigned> pcie_width_current(unsigned gpu) = 0;
  // The most the GPU and its slot together allow.
  virtual Fact<unsigned> pcie_gen_max(unsigned gpu) = 0;
  virtual Fact<unsigned> pcie_width_max(unsigned gpu) = 0;
  // The most the GPU itself allows (a Gen5 card in a Gen4 slot: 5).
  virtual Fact<unsigned> pcie_gen_device_max(unsigned gpu) = 0;

  // Links that do not exist on this GPU answer unknown; existing links answer.
  virtual Fact<bool> nvlink_active(unsigned gpu, unsigned link) = 0;
  virtual Fact<unsigned> nvlink_version(unsigned gpu, unsigned link) = 0;  // raw nvmlNvlinkVersion_t
  virtual Fact<std::string> nvlink_remote_bus_id(unsigned gpu, unsigned link) = 0;
  virtual Fact<NvLinkEnd> nvlink_remote_type(unsigned gpu, unsigned link) = 0;
};

// NVML's fixed upper bound on links per GPU (NVML_NVLINK_MAX_LINKS).
inline constexpr unsigned kNvmlMaxLinks = 18;

// dlopen("libnvidia-ml.so.1") and nvmlInit. Never throws: a missing library
// or a failing init gives an Nvml whose unavailable_reason() says why.
std::unique_ptr<Nvml> load_nvml();

// An Nvml that answers nothing, with `reason` (for --sysfs-root, and tests).
std::unique_ptr<Nvml> absent_nvml(std::string reason);

}  // namespace fb::topo
