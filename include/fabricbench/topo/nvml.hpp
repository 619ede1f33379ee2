// The NVIDIA Management Library, as the inventory asks it: one method per NVML
// call fabricbench uses, by GPU index instead of handle, each answering a
// Fact. The real one loads libnvidia-ml.so.1 at run time (never linked), so
// one binary runs on nodes with and without the NVIDIA driver; tests put a
// fake behind the same interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabricbench/topo/fact.hpp"

namespace fb::topo {

// What an NVLink link's far end is (NVML's nvmlIntNvLinkDeviceType_t).
enum class NvLinkEnd { gpu, ibm_npu, nvswitch, unknown };

// Which way a link counter counts.
enum class Direction { tx, rx };
// A clock domain NVML reports (nvmlClockType_t): the SM clock and the memory clock.
enum class ClockDomain { sm, memory };

// nvmlUtilization_t: percent of NVML's last sample period (1/6 s to 1 s,
// by product) in which one or more kernels ran (gpu), and in which device
// memory was read or written (memory).
struct Utilization {
  unsigned gpu_pct = 0;
  unsigned memory_pct = 0;
};

// Bits of nvmlDeviceGetCurrentClocksEventReasons (nvml.h, "Clocks event
// reasons"; the older name is ...ClocksThrottleReasons, same bits).
namespace clock_reason {
inline constexpr std::uint64_t gpu_idle = 0x1;
inline constexpr std::uint64_t applications_clocks = 0x2;
inline constexpr std::uint64_t sw_power_cap = 0x4;
inline constexpr std::uint64_t hw_slowdown = 0x8;
inline constexpr std::uint64_t sync_boost = 0x10;
inline constexpr std::uint64_t sw_thermal = 0x20;
inline constexpr std::uint64_t hw_thermal = 0x40;
inline constexpr std::uint64_t hw_power_brake = 0x80;
inline constexpr std::uint64_t display_clocks = 0x100;
}  // namespace clock_reason

// Whether and how processes may share the GPU (nvmlComputeMode_t).
enum class ComputeMode { shared, exclusive_thread, prohibited, exclusive_process };
// The record's word for each mode: "default" is NVML's name for shared.
const char* compute_mode_name(ComputeMode mode);

// A process with a compute context on the GPU. The pid is the driver's: the
// host's numbering with drivers before R560, so a process of another
// container (or this one, on those drivers) may have no /proc entry here.
struct GpuProcess {
  unsigned pid = 0;
  Fact<std::uint64_t> used_memory_bytes;  // unknown where NVML cannot say (NVML_VALUE_NOT_AVAILABLE)
};

// Where a GPU stands in a multi-node NVLink fabric (nvmlGpuFabricState_t):
// only `completed` GPUs take part in their NVLink domain.
enum class FabricState { not_supported, not_started, in_progress, completed };
const char* fabric_state_name(FabricState state);

// The GPU's NVLink domain (nvmlDeviceGetGpuFabricInfo): the fabric
// manager's cluster UUID and the clique (partition) within it. GPUs of one
// domain share both.
struct GpuFabric {
  std::string cluster_uuid;  // 32 hex digits in 8-4-4-4-12 form
  unsigned clique_id = 0;
  FabricState state = FabricState::not_supported;
  std::string status;          // NVML's text when registration failed, "" when it did not
  std::string domain() const;  // "<cluster_uuid>/<clique_id>"
  // Registration completed without error: the GPU takes part in domain().
  bool joined() const { return state == FabricState::completed && status.empty(); }
};

// A GPU's error and throttle counters (issue 36), each cumulative: NVML
// counts the NVLink and volatile ECC errors and the throttle time since the
// driver loaded, and an Nvml counts the critical XID events it has seen
// since the first time it was asked for them (NVML only delivers events to
// a set registered before they happen).
enum class GpuCounter {
  nvlink_crc_flit_errors,
  nvlink_replay_errors,
  nvlink_recovery_errors,
  ecc_corrected_volatile,
  ecc_uncorrected_volatile,
  xid_events,
  throttle_power_ns,
  throttle_thermal_ns,
};

class Nvml {
 public:
  virtual ~Nvml() = default;

  // "" when the library loaded and nvmlInit succeeded; else why it did not
  // (then every other call answers unknown with this reason).
  [[nodiscard]] virtual std::string unavailable_reason() const = 0;

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

  // What the GPU does now (fabricbench diagnose samples these).
  virtual Fact<Utilization> utilization(unsigned gpu) = 0;       // nvmlDeviceGetUtilizationRates
  virtual Fact<std::uint64_t> memory_used_bytes(unsigned gpu) = 0;  // nvmlDeviceGetMemoryInfo
  // KB/s (1000 bytes) over NVML's 20 ms window (nvmlDeviceGetPcieThroughput).
  virtual Fact<unsigned> pcie_throughput_kbps(unsigned gpu, Direction direction) = 0;
  // Data (payload) KiB moved over all NVLink links since the driver loaded
  // (nvmlDeviceGetFieldValues, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX,
  // scope UINT_MAX); unknown on GPUs without NVLink.
  virtual Fact<std::uint64_t> nvlink_data_kib(unsigned gpu, Direction direction) = 0;
  virtual Fact<unsigned> clock_mhz(unsigned gpu, ClockDomain domain) = 0;      // nvmlDeviceGetClockInfo
  virtual Fact<unsigned> max_clock_mhz(unsigned gpu, ClockDomain domain) = 0;  // nvmlDeviceGetMaxClockInfo
  // The clock_reason bits active now (nvmlDeviceGetCurrentClocksEventReasons).
  virtual Fact<std::uint64_t> clock_reasons(unsigned gpu) = 0;
  virtual Fact<unsigned> power_mw(unsigned gpu) = 0;        // nvmlDeviceGetPowerUsage
  virtual Fact<unsigned> power_limit_mw(unsigned gpu) = 0;  // nvmlDeviceGetEnforcedPowerLimit
  virtual Fact<unsigned> temperature_c(unsigned gpu) = 0;   // nvmlDeviceGetTemperature, the GPU die sensor

  // Who else may be on the GPU (topo's flags, check's gpu_in_use rule).
  virtual Fact<std::vector<GpuProcess>> compute_processes(unsigned gpu) = 0;  // ...GetComputeRunningProcesses_v3
  virtual Fact<ComputeMode> compute_mode(unsigned gpu) = 0;                   // nvmlDeviceGetComputeMode
  // MIG mode now (nvmlDeviceGetMigMode's current mode); false on a GPU without MIG.
  virtual Fact<bool> mig_enabled(unsigned gpu) = 0;

  // Its multi-node NVLink domain (nvmlDeviceGetGpuFabricInfo); unknown with
  // the reason where this driver's NVML has no such call.
  virtual Fact<GpuFabric> fabric(unsigned gpu) = 0;

  // One error or throttle counter now; unknown with NVML's reason where the
  // driver lacks the call or the GPU the feature (NVML_ERROR_NOT_SUPPORTED).
  virtual Fact<std::uint64_t> gpu_counter(unsigned gpu, GpuCounter counter) = 0;
};

// NVML's fixed upper bound on links per GPU (NVML_NVLINK_MAX_LINKS).
inline constexpr unsigned kNvmlMaxLinks = 18;

// dlopen("libnvidia-ml.so.1") and nvmlInit. Never throws: a missing library
// or a failing init gives an Nvml whose unavailable_reason() says why.
std::unique_ptr<Nvml> load_nvml();

// An Nvml that answers nothing, with `reason` (for --sysfs-root, and tests).
std::unique_ptr<Nvml> absent_nvml(std::string reason);

}  // namespace fb::topo
