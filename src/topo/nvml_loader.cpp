// NVML loaded at run time: dlopen("libnvidia-ml.so.1"), never linked, so the
// binary starts where the NVIDIA driver is absent and says so.
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "fabricbench/core/enum_cover.hpp"
#include "fabricbench/topo/nvml.hpp"
#include "nvml_abi.hpp"

namespace fb::topo {
namespace {

namespace abi = nvml_abi;

// The functions, looked up by name; a null one is absent from this driver.
struct Api {
  abi::Init init = nullptr;
  abi::Shutdown shutdown = nullptr;
  abi::ErrorString error_string = nullptr;
  abi::SystemString driver_version = nullptr, nvml_version = nullptr;
  abi::SystemInt cuda_driver_version = nullptr;
  abi::Count count = nullptr;
  abi::HandleByIndex handle = nullptr;
  abi::DeviceString name = nullptr, uuid = nullptr;
  abi::DevicePci pci = nullptr;
  abi::DeviceMemory memory = nullptr;
  abi::DeviceUint arch = nullptr, gen = nullptr, width = nullptr, max_gen = nullptr, max_width = nullptr,
                  gpu_max_gen = nullptr;
  abi::DeviceEnum pstate = nullptr;
  abi::LinkEnum link_state = nullptr, link_remote_type = nullptr;
  abi::LinkUint link_version = nullptr;
  abi::LinkPci link_remote_pci = nullptr;
  // sampling
  abi::DeviceUtilization utilization = nullptr;
  abi::DeviceEnumUint pcie_throughput = nullptr, clock = nullptr, max_clock = nullptr, temperature = nullptr;
  abi::DeviceUlonglong clock_reasons = nullptr;
  abi::DeviceFields fields = nullptr;
  abi::DeviceUint power = nullptr, power_limit = nullptr;
  // who else is on the GPU
  abi::DeviceProcesses processes = nullptr;
  abi::DeviceEnum compute_mode = nullptr;
  abi::DeviceModes mig_mode = nullptr;
  abi::DeviceFabric fabric = nullptr;
  // error and throttle counters
  abi::DeviceEcc ecc_errors = nullptr;
  abi::DeviceViolation violation = nullptr;
  abi::EventSetCreate event_set_create = nullptr;
  abi::RegisterEvents register_events = nullptr;
  abi::EventSetWait event_set_wait = nullptr;
  abi::EventSetFree event_set_free = nullptr;
};

template <typename Fn>
void find(void* lib, Fn& fn, const char* symbol, const char* older = nullptr) {
  void* p = dlsym(lib, symbol);
  if (!p && older) p = dlsym(lib, older);
  fn = reinterpret_cast<Fn>(p);
}

void find_all(void* lib, Api& a) {
  find(lib, a.init, "nvmlInit_v2", "nvmlInit");
  find(lib, a.shutdown, "nvmlShutdown");
  find(lib, a.error_string, "nvmlErrorString");
  find(lib, a.driver_version, "nvmlSystemGetDriverVersion");
  find(lib, a.nvml_version, "nvmlSystemGetNVMLVersion");
  find(lib, a.cuda_driver_version, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion");
  find(lib, a.count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
  find(lib, a.handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
  find(lib, a.name, "nvmlDeviceGetName");
  find(lib, a.uuid, "nvmlDeviceGetUUID");
  find(lib, a.pci, "nvmlDeviceGetPciInfo_v3");
  find(lib, a.memory, "nvmlDeviceGetMemoryInfo");
  find(lib, a.arch, "nvmlDeviceGetArchitecture");
  find(lib, a.pstate, "nvmlDeviceGetPerformanceState");
  find(lib, a.gen, "nvmlDeviceGetCurrPcieLinkGeneration");
  find(lib, a.width, "nvmlDeviceGetCurrPcieLinkWidth");
  find(lib, a.max_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
  find(lib, a.max_width, "nvmlDeviceGetMaxPcieLinkWidth");
  find(lib, a.gpu_max_gen, "nvmlDeviceGetGpuMaxPcieLinkGeneration");
  find(lib, a.link_state, "nvmlDeviceGetNvLinkState");
  find(lib, a.link_version, "nvmlDeviceGetNvLinkVersion");
  find(lib, a.link_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  find(lib, a.link_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  find(lib, a.utilization, "nvmlDeviceGetUtilizationRates");
  find(lib, a.pcie_throughput, "nvmlDeviceGetPcieThroughput");
  find(lib, a.clock, "nvmlDeviceGetClockInfo");
  find(lib, a.max_clock, "nvmlDeviceGetMaxClockInfo");
  find(lib, a.temperature, "nvmlDeviceGetTemperature");
  // Renamed in R535; drivers before it have only the old name (same bits).
  find(lib, a.clock_reasons, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
  find(lib, a.fields, "nvmlDeviceGetFieldValues");
  find(lib, a.power, "nvmlDeviceGetPowerUsage");
  find(lib, a.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  // Only _v3 fills the four-field ProcessInfo; _v1 and _v2 write other layouts.
  find(lib, a.processes, "nvmlDeviceGetComputeRunningProcesses_v3");
  find(lib, a.compute_mode, "nvmlDeviceGetComputeMode");
  find(lib, a.mig_mode, "nvmlDeviceGetMigMode");
  find(lib, a.fabric, "nvmlDeviceGetGpuFabricInfo");
  find(lib, a.ecc_errors, "nvmlDeviceGetTotalEccErrors");
  find(lib, a.violation, "nvmlDeviceGetViolationStatus");
  find(lib, a.event_set_create, "nvmlEventSetCreate");
  find(lib, a.register_events, "nvmlDeviceRegisterEvents");
  // _v2 since R450 (the unversioned one is the same call in older drivers).
  find(lib, a.event_set_wait, "nvmlEventSetWait_v2", "nvmlEventSetWait");
  find(lib, a.event_set_free, "nvmlEventSetFree");
}

// Which NVML call answers each GpuCounter, and with what argument.
enum class CounterCall { field, ecc_volatile, violation, xid_event };
struct GpuCounterCall {
  GpuCounter counter;
  CounterCall call;
  int arg;  // the field id, nvmlMemoryErrorType_t or nvmlPerfPolicyType_t
  const char* what;
};
// The throttle time is nvmlDeviceGetViolationStatus's (NVML API reference,
// "nvmlViolationTime_t": violationTime in ns, per nvmlPerfPolicyType_t): NVML
// has had it far longer than the clocks-event-reason duration fields
// (NVML_FI_DEV_CLOCKS_EVENT_REASON_*, which older drivers lack), and it
// answers for power and thermal as one call each.
constexpr std::array kGpuCounterCalls{
    GpuCounterCall{GpuCounter::nvlink_crc_flit_errors, CounterCall::field,
                   static_cast<int>(abi::kFieldNvLinkCrcFlitErrorTotal),
                   "NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"},
    GpuCounterCall{GpuCounter::nvlink_replay_errors, CounterCall::field,
                   static_cast<int>(abi::kFieldNvLinkReplayErrorTotal), "NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"},
    GpuCounterCall{GpuCounter::nvlink_recovery_errors, CounterCall::field,
                   static_cast<int>(abi::kFieldNvLinkRecoveryErrorTotal),
                   "NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"},
    GpuCounterCall{GpuCounter::ecc_corrected_volatile, CounterCall::ecc_volatile, abi::kMemoryErrorCorrected,
                   "nvmlDeviceGetTotalEccErrors (corrected, volatile)"},
    GpuCounterCall{GpuCounter::ecc_uncorrected_volatile, CounterCall::ecc_volatile, abi::kMemoryErrorUncorrected,
                   "nvmlDeviceGetTotalEccErrors (uncorrected, volatile)"},
    GpuCounterCall{GpuCounter::xid_events, CounterCall::xid_event, 0, "nvmlEventSetWait_v2 (critical XID events)"},
    GpuCounterCall{GpuCounter::throttle_power_ns, CounterCall::violation, abi::kPerfPolicyPower,
                   "nvmlDeviceGetViolationStatus (power)"},
    GpuCounterCall{GpuCounter::throttle_thermal_ns, CounterCall::violation, abi::kPerfPolicyThermal,
                   "nvmlDeviceGetViolationStatus (thermal)"},
};
static_assert(enum_cover::covers<GpuCounter, kGpuCounterCalls>([](const GpuCounterCall& c) { return c.counter; }),
              "kGpuCounterCalls describes every GpuCounter in enum order");

// Events drained per read at most: a GPU in an XID storm must not hold the
// row up; the rest are counted at the next read.
constexpr int kMostEventsPerRead = 1024;

// nvmlGpuFabricState_t's values, each with its FabricState.
constexpr std::pair<unsigned char, FabricState> kFabricStates[] = {
    {abi::kFabricStateNotSupported, FabricState::not_supported},
    {abi::kFabricStateNotStarted, FabricState::not_started},
    {abi::kFabricStateInProgress, FabricState::in_progress},
    {abi::kFabricStateCompleted, FabricState::completed},
};

// The cluster UUID as text: 16 bytes in the 8-4-4-4-12 hex form of a UUID.
std::string uuid_text(const unsigned char (&b)[abi::kFabricUuidLen]) {
  std::string out;
  for (unsigned i = 0; i < abi::kFabricUuidLen; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", b[i]);
  }
  return out;
}

// nvmlComputeMode_t's values, each with its ComputeMode.
constexpr std::pair<int, ComputeMode> kComputeModes[] = {
    {abi::kComputeModeDefault, ComputeMode::shared},
    {abi::kComputeModeExclusiveThread, ComputeMode::exclusive_thread},
    {abi::kComputeModeProhibited, ComputeMode::prohibited},
    {abi::kComputeModeExclusiveProcess, ComputeMode::exclusive_process},
};

Fact<ComputeMode> compute_mode_of(int mode) {
  for (const auto& [value, m] : kComputeModes)
    if (value == mode) return m;
  return Fact<ComputeMode>::unknown(fmt::format("nvmlDeviceGetComputeMode: mode {} not understood", mode));
}

GpuProcess process_of(const abi::ProcessInfo& p) {
  GpuProcess out;
  out.pid = p.pid;
  out.used_memory_bytes = p.used_gpu_memory == abi::kValueNotAvailable
                              ? Fact<std::uint64_t>::unknown("NVML: not available (NVML_VALUE_NOT_AVAILABLE)")
                              : Fact<std::uint64_t>(p.used_gpu_memory);
  return out;
}

int clock_type(ClockDomain d) { return d == ClockDomain::sm ? abi::kClockSm : abi::kClockMem; }

// A field value's number, whatever type NVML chose for it.
Fact<std::uint64_t> field_number(const abi::FieldValue& v) {
  switch (v.value_type) {
    case abi::kValueUnsignedLongLong:
      return static_cast<std::uint64_t>(v.value.ull);
    case abi::kValueUnsignedLong:
      return static_cast<std::uint64_t>(v.value.ul);
    case abi::kValueUnsignedInt:
      return static_cast<std::uint64_t>(v.value.ui);
    case abi::kValueSignedLongLong:
      if (v.value.sll >= 0) return static_cast<std::uint64_t>(v.value.sll);
      break;
    case abi::kValueDouble:
      if (v.value.d >= 0) return static_cast<std::uint64_t>(v.value.d);
      break;
    default:
      break;
  }
  return Fact<std::uint64_t>::unknown(fmt::format("field {}: value of type {} not understood", v.field_id, v.value_type));
}

std::string c_string(const char* buf, std::size_t size) { return std::string(buf, strnlen(buf, size)); }

// The value `get` reads once the call succeeded, else the call's reason.
template <typename T, typename Get>
Fact<T> answer(const std::string& err, Get get) {
  if (!err.empty()) return Fact<T>::unknown(err);
  return get();
}

class LoadedNvml final : public Nvml {
 public:
  LoadedNvml() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
      const char* e = dlerror();
      reason_ = fmt::format("NVML not loaded: {} (no NVIDIA driver on this node?)", e ? e : "libnvidia-ml.so.1");
      return;
    }
    find_all(lib_, api_);
    if (!api_.init || !api_.count || !api_.handle) {
      reason_ = "NVML: libnvidia-ml.so.1 lacks nvmlInit/nvmlDeviceGetCount (driver too old?)";
      return;
    }
    const abi::Return r = api_.init();
    if (r != abi::kSuccess) reason_ = fmt::format("nvmlInit: {}", error_text(r));
    initialized_ = r == abi::kSuccess;
  }
  ~LoadedNvml() override {
    // The library stays loaded: unloading a driver library at exit buys
    // nothing and some versions do not survive it.
    if (events_ && api_.event_set_free) api_.event_set_free(events_);
    if (initialized_ && api_.shutdown) api_.shutdown();
  }

  std::string unavailable_reason() const override { return reason_; }

  Fact<std::string> driver_version() override {
    return system_string(api_.driver_version, "nvmlSystemGetDriverVersion");
  }
  Fact<std::string> nvml_version() override { return system_string(api_.nvml_version, "nvmlSystemGetNVMLVersion"); }
  Fact<int> cuda_driver_version() override {
    int v = 0;
    return answer<int>(call(api_.cuda_driver_version, "nvmlSystemGetCudaDriverVersion", &v), [&] { return v; });
  }
  Fact<unsigned> device_count() override {
    unsigned n = 0;
    return answer<unsigned>(call(api_.count, "nvmlDeviceGetCount", &n), [&] { return n; });
  }

  Fact<std::string> name(unsigned gpu) override { return device_string(api_.name, "nvmlDeviceGetName", gpu); }
  Fact<std::string> uuid(unsigned gpu) override { return device_string(api_.uuid, "nvmlDeviceGetUUID", gpu); }
  Fact<std::string> pci_bus_id(unsigned gpu) override {
    abi::PciInfo pci{};
    return answer<std::string>(on_device(api_.pci, "nvmlDeviceGetPciInfo_v3", gpu, &pci),
                               [&] { return c_string(pci.bus_id, sizeof(pci.bus_id)); });
  }
  Fact<std::uint64_t> memory_total_bytes(unsigned gpu) override {
    abi::Memory m{};
    return answer<std::uint64_t>(on_device(api_.memory, "nvmlDeviceGetMemoryInfo", gpu, &m), [&] { return m.total; });
  }
  Fact<unsigned> architecture(unsigned gpu) override {
    return device_uint(api_.arch, "nvmlDeviceGetArchitecture", gpu);
  }
  Fact<unsigned> performance_state(unsigned gpu) override {
    int p = abi::kPstateUnknown;
    const auto err = on_device(api_.pstate, "nvmlDeviceGetPerformanceState", gpu, &p);
    if (!err.empty()) return Fact<unsigned>::unknown(err);
    if (p < 0 || p > 15) return Fact<unsigned>::unknown("nvmlDeviceGetPerformanceState: unknown state");
    return static_cast<unsigned>(p);
  }
  Fact<unsigned> pcie_gen_current(unsigned gpu) override {
    return device_uint(api_.gen, "nvmlDeviceGetCurrPcieLinkGeneration", gpu);
  }
  Fact<unsigned> pcie_width_current(unsigned gpu) override {
    return device_uint(api_.width, "nvmlDeviceGetCurrPcieLinkWidth", gpu);
  }
  Fact<unsigned> pcie_gen_max(unsigned gpu) override {
    return device_uint(api_.max_gen, "nvmlDeviceGetMaxPcieLinkGeneration", gpu);
  }
  Fact<unsigned> pcie_width_max(unsigned gpu) override {
    return device_uint(api_.max_width, "nvmlDeviceGetMaxPcieLinkWidth", gpu);
  }
  Fact<unsigned> pcie_gen_device_max(unsigned gpu) override {
    return device_uint(api_.gpu_max_gen, "nvmlDeviceGetGpuMaxPcieLinkGeneration", gpu);
  }

  Fact<bool> nvlink_active(unsigned gpu, unsigned link) override {
    int state = 0;
    return answer<bool>(on_device(api_.link_state, "nvmlDeviceGetNvLinkState", gpu, link, &state),
                        [&] { return state == abi::kFeatureEnabled; });
  }
  Fact<unsigned> nvlink_version(unsigned gpu, unsigned link) override {
    unsigned v = 0;
    return answer<unsigned>(on_device(api_.link_version, "nvmlDeviceGetNvLinkVersion", gpu, link, &v),
                            [&] { return v; });
  }
  Fact<std::string> nvlink_remote_bus_id(unsigned gpu, unsigned link) override {
    abi::PciInfo pci{};
    return answer<std::string>(on_device(api_.link_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2", gpu, link, &pci),
                               [&] { return c_string(pci.bus_id, sizeof(pci.bus_id)); });
  }
  Fact<NvLinkEnd> nvlink_remote_type(unsigned gpu, unsigned link) override {
    int t = 0;
    const auto err = on_device(api_.link_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType", gpu, link, &t);
    if (!err.empty()) return Fact<NvLinkEnd>::unknown(err);
    switch (t) {
      case abi::kNvLinkDeviceGpu:
        return NvLinkEnd::gpu;
      case abi::kNvLinkDeviceIbmNpu:
        return NvLinkEnd::ibm_npu;
      case abi::kNvLinkDeviceSwitch:
        return NvLinkEnd::nvswitch;
      default:
        return NvLinkEnd::unknown;
    }
  }

  Fact<Utilization> utilization(unsigned gpu) override {
    abi::Utilization u{};
    return answer<Utilization>(on_device(api_.utilization, "nvmlDeviceGetUtilizationRates", gpu, &u),
                               [&] { return Utilization{u.gpu, u.memory}; });
  }
  Fact<std::uint64_t> memory_used_bytes(unsigned gpu) override {
    abi::Memory m{};
    return answer<std::uint64_t>(on_device(api_.memory, "nvmlDeviceGetMemoryInfo", gpu, &m), [&] { return m.used; });
  }
  Fact<unsigned> pcie_throughput_kbps(unsigned gpu, Direction d) override {
    unsigned v = 0;
    const int counter = d == Direction::tx ? abi::kPcieUtilTxBytes : abi::kPcieUtilRxBytes;
    return answer<unsigned>(on_device(api_.pcie_throughput, "nvmlDeviceGetPcieThroughput", gpu, counter, &v),
                            [&] { return v; });
  }
  Fact<std::uint64_t> nvlink_data_kib(unsigned gpu, Direction d) override {
    return d == Direction::tx ? field_value(gpu, abi::kFieldNvLinkDataTx, abi::kScopeAllLinks, "NVLink throughput")
                              : field_value(gpu, abi::kFieldNvLinkDataRx, abi::kScopeAllLinks, "NVLink throughput");
  }
  Fact<unsigned> clock_mhz(unsigned gpu, ClockDomain d) override {
    unsigned v = 0;
    return answer<unsigned>(on_device(api_.clock, "nvmlDeviceGetClockInfo", gpu, clock_type(d), &v), [&] { return v; });
  }
  Fact<unsigned> max_clock_mhz(unsigned gpu, ClockDomain d) override {
    unsigned v = 0;
    return answer<unsigned>(on_device(api_.max_clock, "nvmlDeviceGetMaxClockInfo", gpu, clock_type(d), &v),
                            [&] { return v; });
  }
  Fact<std::uint64_t> clock_reasons(unsigned gpu) override {
    unsigned long long v = 0;
    return answer<std::uint64_t>(on_device(api_.clock_reasons, "nvmlDeviceGetCurrentClocksEventReasons", gpu, &v),
                                 [&] { return static_cast<std::uint64_t>(v); });
  }
  Fact<unsigned> power_mw(unsigned gpu) override { return device_uint(api_.power, "nvmlDeviceGetPowerUsage", gpu); }
  Fact<unsigned> power_limit_mw(unsigned gpu) override {
    return device_uint(api_.power_limit, "nvmlDeviceGetEnforcedPowerLimit", gpu);
  }
  Fact<unsigned> temperature_c(unsigned gpu) override {
    unsigned v = 0;
    return answer<unsigned>(on_device(api_.temperature, "nvmlDeviceGetTemperature", gpu, abi::kTemperatureGpu, &v),
                            [&] { return v; });
  }

  Fact<std::vector<GpuProcess>> compute_processes(unsigned gpu) override {
    // The list may grow between the call that sizes it and the one that
    // fills it: ask again with room to spare, a few times.
    const auto d = device(gpu);
    if (!d) return Fact<std::vector<GpuProcess>>::unknown(d.why());
    if (!api_.processes)
      return Fact<std::vector<GpuProcess>>::unknown(
          "nvmlDeviceGetComputeRunningProcesses_v3 is not in this driver's NVML");
    std::vector<abi::ProcessInfo> infos(8);
    for (int attempt = 0; attempt < 4; ++attempt) {
      unsigned n = static_cast<unsigned>(infos.size());
      const abi::Return r = api_.processes(*d, &n, infos.data());
      if (r == abi::kInsufficientSize) {
        infos.resize(std::max<std::size_t>(n, infos.size()) * 2);
        continue;
      }
      if (r != abi::kSuccess)
        return Fact<std::vector<GpuProcess>>::unknown(
            fmt::format("nvmlDeviceGetComputeRunningProcesses_v3: {}", error_text(r)));
      std::vector<GpuProcess> out;
      for (unsigned i = 0; i < n && i < infos.size(); ++i) out.push_back(process_of(infos[i]));
      return out;
    }
    return Fact<std::vector<GpuProcess>>::unknown("nvmlDeviceGetComputeRunningProcesses_v3: the list kept growing");
  }
  Fact<ComputeMode> compute_mode(unsigned gpu) override {
    int mode = 0;
    const auto err = on_device(api_.compute_mode, "nvmlDeviceGetComputeMode", gpu, &mode);
    if (!err.empty()) return Fact<ComputeMode>::unknown(err);
    return compute_mode_of(mode);
  }
  Fact<GpuFabric> fabric(unsigned gpu) override {
    abi::GpuFabricInfo info{};
    if (reason_.empty() && !api_.fabric)
      return Fact<GpuFabric>::unknown(
          "NVML has no fabric info (nvmlDeviceGetGpuFabricInfo is not in this driver: one older than multi-node "
          "NVLink support)");
    const auto err = on_device(api_.fabric, "nvmlDeviceGetGpuFabricInfo", gpu, &info);
    if (!err.empty()) return Fact<GpuFabric>::unknown(err);
    GpuFabric f;
    f.cluster_uuid = uuid_text(info.cluster_uuid);
    f.clique_id = info.clique_id;
    bool known_state = false;
    for (const auto& [value, s] : kFabricStates)
      if (value == info.state) f.state = s, known_state = true;
    if (!known_state)
      return Fact<GpuFabric>::unknown(fmt::format("nvmlDeviceGetGpuFabricInfo: state {} not understood", info.state));
    if (info.status != abi::kSuccess) f.status = error_text(info.status);
    return f;
  }

  Fact<std::uint64_t> gpu_counter(unsigned gpu, GpuCounter counter) override {
    const GpuCounterCall& c = kGpuCounterCalls[static_cast<std::size_t>(counter)];
    switch (c.call) {
      case CounterCall::field:
        // The _TOTAL fields sum the lanes themselves: the scope is not read.
        return field_value(gpu, static_cast<unsigned>(c.arg), 0, c.what);
      case CounterCall::ecc_volatile: {
        unsigned long long n = 0;
        return answer<std::uint64_t>(on_device(api_.ecc_errors, c.what, gpu, c.arg, abi::kVolatileEcc, &n),
                                     [&] { return static_cast<std::uint64_t>(n); });
      }
      case CounterCall::violation: {
        abi::ViolationTime t{};
        return answer<std::uint64_t>(on_device(api_.violation, c.what, gpu, c.arg, &t),
                                     [&] { return static_cast<std::uint64_t>(t.violation_time_ns); });
      }
      case CounterCall::xid_event:
        return xid_events_seen(gpu);
    }
    return Fact<std::uint64_t>::unknown("unknown GPU counter");
  }

  Fact<bool> mig_enabled(unsigned gpu) override {
    unsigned current = 0, pending = 0;
    const auto d = device(gpu);
    if (!d) return Fact<bool>::unknown(d.why());
    if (!api_.mig_mode) return false;  // a driver without MIG calls has no MIG GPU
    const abi::Return r = api_.mig_mode(*d, &current, &pending);
    if (r == abi::kNotSupported) return false;  // this GPU has no MIG
    if (r != abi::kSuccess) return Fact<bool>::unknown(fmt::format("nvmlDeviceGetMigMode: {}", error_text(r)));
    return current == abi::kMigEnable;
  }

 private:
  std::string error_text(abi::Return r) const {
    const char* text = api_.error_string ? api_.error_string(r) : nullptr;
    return text ? fmt::format("{} (NVML error {})", text, r) : fmt::format("NVML error {}", r);
  }

  // Calls `fn` when NVML is up and has it; "" on success, else the reason.
  template <typename Fn, typename... Args>
  std::string call(Fn fn, const char* what, Args... args) const {
    if (!reason_.empty()) return reason_;
    if (!fn) return fmt::format("{} is not in this driver's NVML", what);
    const abi::Return r = fn(args...);
    return r == abi::kSuccess ? std::string() : fmt::format("{}: {}", what, error_text(r));
  }

  Fact<abi::Device> device(unsigned gpu) {
    if (!reason_.empty()) return Fact<abi::Device>::unknown(reason_);
    if (gpu < handles_.size() && handles_[gpu]) return handles_[gpu];
    abi::Device d = nullptr;
    const auto err = call(api_.handle, "nvmlDeviceGetHandleByIndex", gpu, &d);
    if (!err.empty()) return Fact<abi::Device>::unknown(err);
    if (handles_.size() <= gpu) handles_.resize(gpu + 1, nullptr);
    handles_[gpu] = d;
    return d;
  }

  template <typename Fn, typename... Args>
  std::string on_device(Fn fn, const char* what, unsigned gpu, Args... args) {
    const auto d = device(gpu);
    if (!d) return d.why();
    return call(fn, what, *d, args...);
  }

  Fact<std::string> system_string(abi::SystemString fn, const char* what) const {
    char buf[abi::kStringSize] = {};
    return answer<std::string>(call(fn, what, buf, static_cast<unsigned>(sizeof(buf))),
                               [&] { return c_string(buf, sizeof(buf)); });
  }
  Fact<std::string> device_string(abi::DeviceString fn, const char* what, unsigned gpu) {
    char buf[abi::kStringSize] = {};
    return answer<std::string>(on_device(fn, what, gpu, buf, static_cast<unsigned>(sizeof(buf))),
                               [&] { return c_string(buf, sizeof(buf)); });
  }
  Fact<unsigned> device_uint(abi::DeviceUint fn, const char* what, unsigned gpu) {
    unsigned v = 0;
    return answer<unsigned>(on_device(fn, what, gpu, &v), [&] { return v; });
  }

  // One field of nvmlDeviceGetFieldValues, as a count.
  Fact<std::uint64_t> field_value(unsigned gpu, unsigned field_id, unsigned scope, const char* what) {
    abi::FieldValue v{};
    v.field_id = field_id;
    v.scope_id = scope;
    const auto err = on_device(api_.fields, "nvmlDeviceGetFieldValues", gpu, 1, &v);
    if (!err.empty()) return Fact<std::uint64_t>::unknown(err);
    // The call succeeds when any value was filled: each value has its own code.
    if (v.nvml_return != abi::kSuccess)
      return Fact<std::uint64_t>::unknown(fmt::format("{} field {}: {}", what, field_id, error_text(v.nvml_return)));
    return field_number(v);
  }

  // The critical XID events NVML delivered for `gpu` since its first read.
  // The first read registers the GPU in the process's one event set; each
  // read then takes every waiting event (timeout 0: it never waits) and
  // counts it for the GPU it names.
  Fact<std::uint64_t> xid_events_seen(unsigned gpu) {
    const auto d = device(gpu);
    if (!d) return Fact<std::uint64_t>::unknown(d.why());
    if (const auto why = register_for_xids(gpu, *d); !why.empty()) return Fact<std::uint64_t>::unknown(why);
    if (const auto why = take_events(); !why.empty()) return Fact<std::uint64_t>::unknown(why);
    return xids_[gpu];
  }

  // "" once `gpu` is in the event set, else why it cannot be (the answer of
  // the first try is kept: a GPU without XID events stays without).
  std::string register_for_xids(unsigned gpu, abi::Device d) {
    if (xids_.size() <= gpu) {
      xids_.resize(gpu + 1, 0);
      xid_registered_.resize(gpu + 1);
    }
    auto& registered = xid_registered_[gpu];
    if (registered) return *registered;
    if (!events_) {
      if (const auto why = call(api_.event_set_create, "nvmlEventSetCreate", &events_); !why.empty()) {
        events_ = nullptr;
        return *(registered = why);
      }
    }
    registered = call(api_.register_events, "nvmlDeviceRegisterEvents (critical XID events)", d,
                      abi::kEventTypeXidCriticalError, events_);
    return *registered;
  }

  std::string take_events() {
    if (!api_.event_set_wait) return "nvmlEventSetWait_v2 is not in this driver's NVML";
    for (int i = 0; i < kMostEventsPerRead; ++i) {
      abi::EventData e{};
      const abi::Return r = api_.event_set_wait(events_, &e, 0);
      if (r == abi::kTimeout) return "";  // none waiting
      if (r != abi::kSuccess) return fmt::format("nvmlEventSetWait_v2: {}", error_text(r));
      if (!(e.event_type & abi::kEventTypeXidCriticalError)) continue;
      for (std::size_t g = 0; g < handles_.size() && g < xids_.size(); ++g)
        if (handles_[g] == e.device) ++xids_[g];
    }
    return "";
  }

  void* lib_ = nullptr;
  Api api_;
  std::string reason_;
  bool initialized_ = false;
  std::vector<abi::Device> handles_;
  // XID events: the set, and per GPU the events counted and whether it is in the set.
  abi::EventSet events_ = nullptr;
  std::vector<std::uint64_t> xids_;
  std::vector<std::optional<std::string>> xid_registered_;
};

// Answers nothing, always with the same reason.
class AbsentNvml final : public Nvml {
 public:
  explicit AbsentNvml(std::string reason) : reason_(std::move(reason)) {}
  std::string unavailable_reason() const override { return reason_; }
  Fact<std::string> driver_version() override { return no<std::string>(); }
  Fact<std::string> nvml_version() override { return no<std::string>(); }
  Fact<int> cuda_driver_version() override { return no<int>(); }
  Fact<unsigned> device_count() override { return no<unsigned>(); }
  Fact<std::string> name(unsigned) override { return no<std::string>(); }
  Fact<std::string> uuid(unsigned) override { return no<std::string>(); }
  Fact<std::string> pci_bus_id(unsigned) override { return no<std::string>(); }
  Fact<std::uint64_t> memory_total_bytes(unsigned) override { return no<std::uint64_t>(); }
  Fact<unsigned> architecture(unsigned) override { return no<unsigned>(); }
  Fact<unsigned> performance_state(unsigned) override { return no<unsigned>(); }
  Fact<unsigned> pcie_gen_current(unsigned) override { return no<unsigned>(); }
  Fact<unsigned> pcie_width_current(unsigned) override { return no<unsigned>(); }
  Fact<unsigned> pcie_gen_max(unsigned) override { return no<unsigned>(); }
  Fact<unsigned> pcie_width_max(unsigned) override { return no<unsigned>(); }
  Fact<unsigned> pcie_gen_device_max(unsigned) override { return no<unsigned>(); }
  Fact<bool> nvlink_active(unsigned, unsigned) override { return no<bool>(); }
  Fact<unsigned> nvlink_version(unsigned, unsigned) override { return no<unsigned>(); }
  Fact<std::string> nvlink_remote_bus_id(unsigned, unsigned) override { return no<std::string>(); }
  Fact<NvLinkEnd> nvlink_remote_type(unsigned, unsigned) override { return no<NvLinkEnd>(); }
  Fact<Utilization> utilization(unsigned) override { return no<Utilization>(); }
  Fact<std::uint64_t> memory_used_bytes(unsigned) override { return no<std::uint64_t>(); }
  Fact<unsigned> pcie_throughput_kbps(unsigned, Direction) override { return no<unsigned>(); }
  Fact<std::uint64_t> nvlink_data_kib(unsigned, Direction) override { return no<std::uint64_t>(); }
  Fact<unsigned> clock_mhz(unsigned, ClockDomain) override { return no<unsigned>(); }
  Fact<unsigned> max_clock_mhz(unsigned, ClockDomain) override { return no<unsigned>(); }
  Fact<std::uint64_t> clock_reasons(unsigned) override { return no<std::uint64_t>(); }
  Fact<unsigned> power_mw(unsigned) override { return no<unsigned>(); }
  Fact<unsigned> power_limit_mw(unsigned) override { return no<unsigned>(); }
  Fact<unsigned> temperature_c(unsigned) override { return no<unsigned>(); }
  Fact<std::vector<GpuProcess>> compute_processes(unsigned) override { return no<std::vector<GpuProcess>>(); }
  Fact<ComputeMode> compute_mode(unsigned) override { return no<ComputeMode>(); }
  Fact<bool> mig_enabled(unsigned) override { return no<bool>(); }
  Fact<GpuFabric> fabric(unsigned) override { return no<GpuFabric>(); }
  Fact<std::uint64_t> gpu_counter(unsigned, GpuCounter) override { return no<std::uint64_t>(); }

 private:
  template <typename T>
  Fact<T> no() const {
    return Fact<T>::unknown(reason_);
  }
  std::string reason_;
};

}  // namespace

std::unique_ptr<Nvml> load_nvml() { return std::make_unique<LoadedNvml>(); }

std::unique_ptr<Nvml> absent_nvml(std::string reason) { return std::make_unique<AbsentNvml>(std::move(reason)); }

}  // namespace fb::topo
