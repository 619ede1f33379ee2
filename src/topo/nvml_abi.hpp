// The part of NVML's C interface fabricbench calls, declared here from the
// NVML API reference (docs.nvidia.com/deploy/nvml-api) so that the build needs
// no nvml.h: type layouts, constants and function signatures are facts of that
// interface. The library itself is loaded at run time (nvml_loader.cpp).
// Where the CUDA toolkit has nvml.h, tests/topo/nvml_abi_test.cpp checks these
// declarations against it.
#pragma once

namespace fb::topo::nvml_abi {

using Return = int;                            // nvmlReturn_t, a C enum
inline constexpr Return kSuccess = 0;          // NVML_SUCCESS
inline constexpr Return kInvalidArgument = 2;  // NVML_ERROR_INVALID_ARGUMENT
inline constexpr Return kNotSupported = 3;     // NVML_ERROR_NOT_SUPPORTED
inline constexpr Return kInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
inline constexpr Return kTimeout = 10;          // NVML_ERROR_TIMEOUT (nvmlEventSetWait: no event waiting)

struct DeviceOpaque;
using Device = DeviceOpaque*;  // nvmlDevice_t

inline constexpr unsigned kPciBusIdLegacySize = 16;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
inline constexpr unsigned kPciBusIdSize = 32;        // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
inline constexpr unsigned kStringSize = 96;          // >= NVML_DEVICE_NAME_V2_BUFFER_SIZE, UUID_V2 (96), driver (80)

// nvmlPciInfo_t (the layout nvmlDeviceGetPciInfo_v3 fills).
struct PciInfo {
  char bus_id_legacy[kPciBusIdLegacySize];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[kPciBusIdSize];
};

// nvmlMemory_t (nvmlDeviceGetMemoryInfo, version 1).
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

inline constexpr int kFeatureEnabled = 1;  // NVML_FEATURE_ENABLED (nvmlEnableState_t)
// nvmlIntNvLinkDeviceType_t
inline constexpr int kNvLinkDeviceGpu = 0x00;
inline constexpr int kNvLinkDeviceIbmNpu = 0x01;
inline constexpr int kNvLinkDeviceSwitch = 0x02;
inline constexpr int kPstateUnknown = 32;  // NVML_PSTATE_UNKNOWN (nvmlPstates_t)

// ---- Who else uses the GPU (topo, check's gpu_in_use rule) ----------------

// nvmlProcessInfo_t as the _v3 process calls fill it (NVML 11.0 and later).
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;  // bytes, or kValueNotAvailable
  unsigned int gpu_instance_id;        // MIG: the instance, else 0xFFFFFFFF
  unsigned int compute_instance_id;
};
inline constexpr unsigned long long kValueNotAvailable = ~0ull;  // NVML_VALUE_NOT_AVAILABLE

// nvmlComputeMode_t
inline constexpr int kComputeModeDefault = 0;
inline constexpr int kComputeModeExclusiveThread = 1;
inline constexpr int kComputeModeProhibited = 2;
inline constexpr int kComputeModeExclusiveProcess = 3;
inline constexpr unsigned kMigEnable = 1;  // NVML_DEVICE_MIG_ENABLE

// ---- Sampling (fabricbench diagnose) ----------------------------------------

// nvmlUtilization_t: percent of the last sample period (1/6 s to 1 s by
// product) in which a kernel ran (gpu) and device memory was read or written
// (memory).
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

inline constexpr int kPcieUtilTxBytes = 0;  // NVML_PCIE_UTIL_TX_BYTES (nvmlPcieUtilCounter_t)
inline constexpr int kPcieUtilRxBytes = 1;  // NVML_PCIE_UTIL_RX_BYTES
inline constexpr int kClockSm = 1;          // NVML_CLOCK_SM (nvmlClockType_t)
inline constexpr int kClockMem = 2;         // NVML_CLOCK_MEM
inline constexpr int kTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU (nvmlTemperatureSensors_t)

// Field ids (nvmlDeviceGetFieldValues): NVLink data counters, cumulative KiB;
// scope id UINT_MAX sums every link (nvml.h, "NVLink throughput counters").
inline constexpr unsigned kFieldNvLinkDataTx = 138;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX
inline constexpr unsigned kFieldNvLinkDataRx = 139;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
inline constexpr unsigned kScopeAllLinks = 0xFFFFFFFFu;

// nvmlValueType_t
inline constexpr int kValueDouble = 0;
inline constexpr int kValueUnsignedInt = 1;
inline constexpr int kValueUnsignedLong = 2;
inline constexpr int kValueUnsignedLongLong = 3;
inline constexpr int kValueSignedLongLong = 4;

// nvmlValue_t
union Value {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
};

// nvmlFieldValue_t
struct FieldValue {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp_us;
  long long latency_us;
  int value_type;  // nvmlValueType_t
  Return nvml_return;
  Value value;
};

// ---- Multi-node NVLink (GB200/GB300 NVL72): the GPU's place in the fabric ----
// nvml.h (NVML API reference, "GPU Fabric" / nvmlDeviceGetGpuFabricInfo):
// NVML_GPU_FABRIC_UUID_LEN 16, nvmlGpuFabricState_t an unsigned char with
// NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0, _NOT_STARTED 1, _IN_PROGRESS 2,
// _COMPLETED 3, and nvmlGpuFabricInfo_t below (the unversioned call's layout).
inline constexpr unsigned kFabricUuidLen = 16;
inline constexpr unsigned char kFabricStateNotSupported = 0;
inline constexpr unsigned char kFabricStateNotStarted = 1;
inline constexpr unsigned char kFabricStateInProgress = 2;
inline constexpr unsigned char kFabricStateCompleted = 3;

// nvmlGpuFabricInfo_t
struct GpuFabricInfo {
  unsigned char cluster_uuid[kFabricUuidLen];  // the NVLink domain (an NVL72 rack's fabric manager cluster)
  Return status;                               // why registration failed, when it did
  unsigned int clique_id;                      // the partition inside the cluster
  unsigned char state;                         // nvmlGpuFabricState_t
};

// ---- Error and throttle counters around each measured row (issue 36) -------

// Field ids (nvml.h, "NvLink Flit/Replay/Recovery Error Counters"): each the
// total over the GPU's lanes, cumulative since the driver loaded.
inline constexpr unsigned kFieldNvLinkCrcFlitErrorTotal = 38;   // NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL
inline constexpr unsigned kFieldNvLinkReplayErrorTotal = 52;    // NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL
inline constexpr unsigned kFieldNvLinkRecoveryErrorTotal = 59;  // NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL

// nvmlDeviceGetTotalEccErrors's nvmlMemoryErrorType_t and nvmlEccCounterType_t
// (volatile: since the driver loaded; aggregate: over the GPU's life).
inline constexpr int kMemoryErrorCorrected = 0;    // NVML_MEMORY_ERROR_TYPE_CORRECTED
inline constexpr int kMemoryErrorUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
inline constexpr int kVolatileEcc = 0;             // NVML_VOLATILE_ECC

// nvmlPerfPolicyType_t, and nvmlViolationTime_t (nvmlDeviceGetViolationStatus):
// how long the policy held the clocks below the application clocks.
inline constexpr int kPerfPolicyPower = 0;    // NVML_PERF_POLICY_POWER
inline constexpr int kPerfPolicyThermal = 1;  // NVML_PERF_POLICY_THERMAL
struct ViolationTime {
  unsigned long long reference_time_us;  // CPU timestamp
  unsigned long long violation_time_ns;  // cumulative
};

// Events (nvml.h, "Event Handling Methods"): nvmlEventSet_t, the critical XID
// event type, and nvmlEventData_t as drivers since R450 fill it (the two MIG
// ids came last; declaring them keeps a newer library inside the buffer).
struct EventSetOpaque;
using EventSet = EventSetOpaque*;
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8ull;  // nvmlEventTypeXidCriticalError
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  // the XID number for an XID event
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

using Init = Return (*)();                                         // nvmlInit_v2
using Shutdown = Return (*)();                                     // nvmlShutdown
using ErrorString = const char* (*)(Return);                       // nvmlErrorString
using SystemString = Return (*)(char*, unsigned int);              // nvmlSystemGetDriverVersion, ...GetNVMLVersion
using SystemInt = Return (*)(int*);                                // nvmlSystemGetCudaDriverVersion_v2
using Count = Return (*)(unsigned int*);                           // nvmlDeviceGetCount_v2
using HandleByIndex = Return (*)(unsigned int, Device*);           // nvmlDeviceGetHandleByIndex_v2
using DeviceString = Return (*)(Device, char*, unsigned int);      // nvmlDeviceGetName, nvmlDeviceGetUUID
using DevicePci = Return (*)(Device, PciInfo*);                    // nvmlDeviceGetPciInfo_v3
using DeviceMemory = Return (*)(Device, Memory*);                  // nvmlDeviceGetMemoryInfo
using DeviceUint = Return (*)(Device, unsigned int*);              // ...GetArchitecture, ...PcieLinkGeneration/Width
using DeviceEnum = Return (*)(Device, int*);                       // nvmlDeviceGetPerformanceState
using LinkEnum = Return (*)(Device, unsigned int, int*);           // nvmlDeviceGetNvLinkState, ...RemoteDeviceType
using LinkUint = Return (*)(Device, unsigned int, unsigned int*);  // nvmlDeviceGetNvLinkVersion
using LinkPci = Return (*)(Device, unsigned int, PciInfo*);        // nvmlDeviceGetNvLinkRemotePciInfo_v2
using DeviceUtilization = Return (*)(Device, Utilization*);        // nvmlDeviceGetUtilizationRates
using DeviceEnumUint = Return (*)(Device, int, unsigned int*);     // ...GetPcieThroughput, ...GetClockInfo,
                                                                   // ...GetMaxClockInfo, ...GetTemperature
using DeviceUlonglong = Return (*)(Device, unsigned long long*);   // nvmlDeviceGetCurrentClocksEventReasons
using DeviceFields = Return (*)(Device, int, FieldValue*);         // nvmlDeviceGetFieldValues
using DeviceProcesses = Return (*)(Device, unsigned int*, ProcessInfo*);  // ...GetComputeRunningProcesses_v3
using DeviceModes = Return (*)(Device, unsigned int*, unsigned int*);     // nvmlDeviceGetMigMode (current, pending)
using DeviceFabric = Return (*)(Device, GpuFabricInfo*);                  // nvmlDeviceGetGpuFabricInfo
using DeviceEcc = Return (*)(Device, int, int, unsigned long long*);      // nvmlDeviceGetTotalEccErrors
using DeviceViolation = Return (*)(Device, int, ViolationTime*);          // nvmlDeviceGetViolationStatus
using EventSetCreate = Return (*)(EventSet*);                             // nvmlEventSetCreate
using RegisterEvents = Return (*)(Device, unsigned long long, EventSet);  // nvmlDeviceRegisterEvents
using EventSetWait = Return (*)(EventSet, EventData*, unsigned int);      // nvmlEventSetWait_v2 (timeout ms)
using EventSetFree = Return (*)(EventSet);                                // nvmlEventSetFree
// (compute mode: nvmlDeviceGetComputeMode is DeviceEnum, an nvmlComputeMode_t)
// (power: nvmlDeviceGetPowerUsage and nvmlDeviceGetEnforcedPowerLimit are DeviceUint, milliwatts)

}  // namespace fb::topo::nvml_abi
