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

}  // namespace
}  // namespace fb::topo
