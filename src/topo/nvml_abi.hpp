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

}  // namespace fb::topo::nvml_abi
