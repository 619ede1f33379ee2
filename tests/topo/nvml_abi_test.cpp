// Built only where the CUDA toolkit has nvml.h: fabricbench's own NVML
// declarations (src/topo/nvml_abi.hpp) must match NVIDIA's header, field by
// field, or the loaded library would write past our structs.
#include "nvml_abi.hpp"

#include <gtest/gtest.h>
#include <nvml.h>

#include <cstddef>

#include "fabricbench/topo/nvml.hpp"

namespace fb::topo {
namespace {

namespace abi = nvml_abi;

TEST(NvmlAbi, PciInfoLayoutMatchesTheHeader) {
  EXPECT_EQ(sizeof(abi::PciInfo), sizeof(nvmlPciInfo_t));
  EXPECT_EQ(offsetof(abi::PciInfo, domain), offsetof(nvmlPciInfo_t, domain));
  EXPECT_EQ(offsetof(abi::PciInfo, pci_subsystem_id), offsetof(nvmlPciInfo_t, pciSubSystemId));
  EXPECT_EQ(offsetof(abi::PciInfo, bus_id), offsetof(nvmlPciInfo_t, busId));
  EXPECT_EQ(sizeof(abi::PciInfo::bus_id), sizeof(nvmlPciInfo_t::busId));
}

TEST(NvmlAbi, MemoryLayoutMatchesTheHeader) {
  EXPECT_EQ(sizeof(abi::Memory), sizeof(nvmlMemory_t));
  EXPECT_EQ(offsetof(abi::Memory, total), offsetof(nvmlMemory_t, total));
}

TEST(NvmlAbi, ConstantsAndEnumSizesMatchTheHeader) {
  EXPECT_EQ(abi::kSuccess, NVML_SUCCESS);
  EXPECT_EQ(abi::kInvalidArgument, NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(abi::kNotSupported, NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(abi::kFeatureEnabled, NVML_FEATURE_ENABLED);
  EXPECT_EQ(abi::kNvLinkDeviceGpu, NVML_NVLINK_DEVICE_TYPE_GPU);
  EXPECT_EQ(abi::kNvLinkDeviceSwitch, NVML_NVLINK_DEVICE_TYPE_SWITCH);
  EXPECT_EQ(abi::kPstateUnknown, NVML_PSTATE_UNKNOWN);
  EXPECT_EQ(abi::kPciBusIdSize, static_cast<unsigned>(NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE));
  EXPECT_GE(abi::kStringSize, static_cast<unsigned>(NVML_DEVICE_UUID_V2_BUFFER_SIZE));
  EXPECT_GE(abi::kStringSize, static_cast<unsigned>(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE));
  EXPECT_EQ(sizeof(abi::Return), sizeof(nvmlReturn_t));
  EXPECT_EQ(sizeof(int), sizeof(nvmlEnableState_t));
  EXPECT_EQ(sizeof(int), sizeof(nvmlPstates_t));
  EXPECT_EQ(sizeof(int), sizeof(nvmlIntNvLinkDeviceType_t));
  EXPECT_EQ(sizeof(unsigned), sizeof(nvmlDeviceArchitecture_t));
  EXPECT_GE(kNvmlMaxLinks, static_cast<unsigned>(NVML_NVLINK_MAX_LINKS));  // we ask every link NVML has
}

// The sampling calls of `fabricbench diagnose`.
TEST(NvmlAbi, SamplingLayoutsMatchTheHeader) {
  EXPECT_EQ(sizeof(abi::Utilization), sizeof(nvmlUtilization_t));
  EXPECT_EQ(offsetof(abi::Utilization, memory), offsetof(nvmlUtilization_t, memory));
  EXPECT_EQ(sizeof(abi::FieldValue), sizeof(nvmlFieldValue_t));
  EXPECT_EQ(offsetof(abi::FieldValue, scope_id), offsetof(nvmlFieldValue_t, scopeId));
  EXPECT_EQ(offsetof(abi::FieldValue, timestamp_us), offsetof(nvmlFieldValue_t, timestamp));
  EXPECT_EQ(offsetof(abi::FieldValue, value_type), offsetof(nvmlFieldValue_t, valueType));
  EXPECT_EQ(offsetof(abi::FieldValue, nvml_return), offsetof(nvmlFieldValue_t, nvmlReturn));
  EXPECT_EQ(offsetof(abi::FieldValue, value), offsetof(nvmlFieldValue_t, value));
  EXPECT_EQ(sizeof(abi::Value), sizeof(nvmlValue_t));
  EXPECT_EQ(sizeof(int), sizeof(nvmlValueType_t));
  EXPECT_EQ(sizeof(int), sizeof(nvmlPcieUtilCounter_t));
  EXPECT_EQ(sizeof(int), sizeof(nvmlClockType_t));
  EXPECT_EQ(sizeof(int), sizeof(nvmlTemperatureSensors_t));
}

TEST(NvmlAbi, SamplingConstantsMatchTheHeader) {
  EXPECT_EQ(abi::kPcieUtilTxBytes, NVML_PCIE_UTIL_TX_BYTES);
  EXPECT_EQ(abi::kPcieUtilRxBytes, NVML_PCIE_UTIL_RX_BYTES);
  EXPECT_EQ(abi::kClockSm, NVML_CLOCK_SM);
  EXPECT_EQ(abi::kClockMem, NVML_CLOCK_MEM);
  EXPECT_EQ(abi::kTemperatureGpu, NVML_TEMPERATURE_GPU);
  EXPECT_EQ(abi::kFieldNvLinkDataTx, static_cast<unsigned>(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX));
  EXPECT_EQ(abi::kFieldNvLinkDataRx, static_cast<unsigned>(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX));
  EXPECT_EQ(abi::kValueDouble, NVML_VALUE_TYPE_DOUBLE);
  EXPECT_EQ(abi::kValueUnsignedInt, NVML_VALUE_TYPE_UNSIGNED_INT);
  EXPECT_EQ(abi::kValueUnsignedLong, NVML_VALUE_TYPE_UNSIGNED_LONG);
  EXPECT_EQ(abi::kValueUnsignedLongLong, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
  EXPECT_EQ(abi::kValueSignedLongLong, NVML_VALUE_TYPE_SIGNED_LONG_LONG);
  EXPECT_EQ(clock_reason::gpu_idle, static_cast<std::uint64_t>(nvmlClocksThrottleReasonGpuIdle));
  EXPECT_EQ(clock_reason::applications_clocks,
            static_cast<std::uint64_t>(nvmlClocksThrottleReasonApplicationsClocksSetting));
  EXPECT_EQ(clock_reason::sw_power_cap, static_cast<std::uint64_t>(nvmlClocksThrottleReasonSwPowerCap));
  EXPECT_EQ(clock_reason::hw_slowdown, static_cast<std::uint64_t>(nvmlClocksThrottleReasonHwSlowdown));
  EXPECT_EQ(clock_reason::sync_boost, static_cast<std::uint64_t>(nvmlClocksThrottleReasonSyncBoost));
  EXPECT_EQ(clock_reason::sw_thermal, static_cast<std::uint64_t>(nvmlClocksThrottleReasonSwThermalSlowdown));
  EXPECT_EQ(clock_reason::hw_thermal, static_cast<std::uint64_t>(nvmlClocksThrottleReasonHwThermalSlowdown));
  EXPECT_EQ(clock_reason::hw_power_brake, static_cast<std::uint64_t>(nvmlClocksThrottleReasonHwPowerBrakeSlowdown));
  EXPECT_EQ(clock_reason::display_clocks, static_cast<std::uint64_t>(nvmlClocksThrottleReasonDisplayClockSetting));
}

// Who else uses the GPU (topo's sharing flags, check's shared_gpus rule).
TEST(NvmlAbi, SharingLayoutsAndConstantsMatchTheHeader) {
  EXPECT_EQ(sizeof(abi::ProcessInfo), sizeof(nvmlProcessInfo_t));
  EXPECT_EQ(offsetof(abi::ProcessInfo, used_gpu_memory), offsetof(nvmlProcessInfo_t, usedGpuMemory));
  EXPECT_EQ(offsetof(abi::ProcessInfo, gpu_instance_id), offsetof(nvmlProcessInfo_t, gpuInstanceId));
  EXPECT_EQ(offsetof(abi::ProcessInfo, compute_instance_id), offsetof(nvmlProcessInfo_t, computeInstanceId));
  EXPECT_EQ(abi::kInsufficientSize, NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(abi::kValueNotAvailable, static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));
  EXPECT_EQ(abi::kComputeModeDefault, NVML_COMPUTEMODE_DEFAULT);
  EXPECT_EQ(abi::kComputeModeExclusiveThread, NVML_COMPUTEMODE_EXCLUSIVE_THREAD);
  EXPECT_EQ(abi::kComputeModeProhibited, NVML_COMPUTEMODE_PROHIBITED);
  EXPECT_EQ(abi::kComputeModeExclusiveProcess, NVML_COMPUTEMODE_EXCLUSIVE_PROCESS);
  EXPECT_EQ(sizeof(int), sizeof(nvmlComputeMode_t));
  EXPECT_EQ(abi::kMigEnable, static_cast<unsigned>(NVML_DEVICE_MIG_ENABLE));
}

// Multi-node NVLink: nvmlDeviceGetGpuFabricInfo's struct and states.
TEST(NvmlAbi, GpuFabricInfoLayoutMatchesTheHeader) {
  EXPECT_EQ(sizeof(abi::GpuFabricInfo), sizeof(nvmlGpuFabricInfo_t));
  EXPECT_EQ(offsetof(abi::GpuFabricInfo, status), offsetof(nvmlGpuFabricInfo_t, status));
  EXPECT_EQ(offsetof(abi::GpuFabricInfo, clique_id), offsetof(nvmlGpuFabricInfo_t, cliqueId));
  EXPECT_EQ(offsetof(abi::GpuFabricInfo, state), offsetof(nvmlGpuFabricInfo_t, state));
  EXPECT_EQ(abi::kFabricUuidLen, static_cast<unsigned>(NVML_GPU_FABRIC_UUID_LEN));
  EXPECT_EQ(abi::kFabricStateNotSupported, NVML_GPU_FABRIC_STATE_NOT_SUPPORTED);
  EXPECT_EQ(abi::kFabricStateNotStarted, NVML_GPU_FABRIC_STATE_NOT_STARTED);
  EXPECT_EQ(abi::kFabricStateInProgress, NVML_GPU_FABRIC_STATE_IN_PROGRESS);
  EXPECT_EQ(abi::kFabricStateCompleted, NVML_GPU_FABRIC_STATE_COMPLETED);
  EXPECT_EQ(sizeof(unsigned char), sizeof(nvmlGpuFabricState_t));
}

// The error and throttle counters read around each measured row (issue 36).
TEST(NvmlAbi, CounterLayoutsAndConstantsMatchTheHeader) {
  EXPECT_EQ(abi::kTimeout, NVML_ERROR_TIMEOUT);
  EXPECT_EQ(abi::kFieldNvLinkCrcFlitErrorTotal, static_cast<unsigned>(NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL));
  EXPECT_EQ(abi::kFieldNvLinkReplayErrorTotal, static_cast<unsigned>(NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL));
  EXPECT_EQ(abi::kFieldNvLinkRecoveryErrorTotal, static_cast<unsigned>(NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL));
  EXPECT_EQ(abi::kMemoryErrorCorrected, NVML_MEMORY_ERROR_TYPE_CORRECTED);
  EXPECT_EQ(abi::kMemoryErrorUncorrected, NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
  EXPECT_EQ(abi::kVolatileEcc, NVML_VOLATILE_ECC);
  EXPECT_EQ(abi::kPerfPolicyPower, NVML_PERF_POLICY_POWER);
  EXPECT_EQ(abi::kPerfPolicyThermal, NVML_PERF_POLICY_THERMAL);
  EXPECT_EQ(sizeof(abi::ViolationTime), sizeof(nvmlViolationTime_t));
  EXPECT_EQ(offsetof(abi::ViolationTime, violation_time_ns), offsetof(nvmlViolationTime_t, violationTime));
  EXPECT_EQ(abi::kEventTypeXidCriticalError, static_cast<unsigned long long>(nvmlEventTypeXidCriticalError));
  EXPECT_EQ(sizeof(abi::EventData), sizeof(nvmlEventData_t));
  EXPECT_EQ(offsetof(abi::EventData, event_type), offsetof(nvmlEventData_t, eventType));
  EXPECT_EQ(offsetof(abi::EventData, event_data), offsetof(nvmlEventData_t, eventData));
}

}  // namespace
}  // namespace fb::topo
