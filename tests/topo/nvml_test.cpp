// The real NVML loader on whatever this machine is: it never throws, and it
// either answers or says why not.
#include "fabricbench/topo/nvml.hpp"

#include <gtest/gtest.h>

namespace fb::topo {
namespace {

TEST(Nvml, LoadsOrSaysWhyNot) {
  const auto nvml = load_nvml();
  const std::string why = nvml->unavailable_reason();
  if (why.empty()) {
    // A machine with the driver: the system calls answer.
    EXPECT_TRUE(nvml->device_count()) << nvml->device_count().why();
    EXPECT_TRUE(nvml->driver_version()) << nvml->driver_version().why();
  } else {
    EXPECT_NE(why.find("NVML"), std::string::npos) << why;
    for (const auto& f : {nvml->name(0), nvml->uuid(0), nvml->pci_bus_id(0)}) {
      EXPECT_FALSE(f);
      EXPECT_EQ(f.why(), why);
    }
    EXPECT_FALSE(nvml->device_count());
    EXPECT_FALSE(nvml->nvlink_active(0, 0));
  }
}

TEST(Nvml, AnIndexPastTheLastGpuIsUnknownNotACrash) {
  const auto nvml = load_nvml();
  EXPECT_FALSE(nvml->name(4096));
  EXPECT_FALSE(nvml->nvlink_remote_bus_id(4096, 99));
}

TEST(Nvml, AbsentAnswersWithItsReason) {
  const auto nvml = absent_nvml("not asked");
  EXPECT_EQ(nvml->unavailable_reason(), "not asked");
  EXPECT_EQ(nvml->memory_total_bytes(0).why(), "not asked");
  EXPECT_EQ(nvml->pcie_gen_max(0).why(), "not asked");
}

}  // namespace
}  // namespace fb::topo
