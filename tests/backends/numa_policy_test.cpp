// Pinned host buffers go to their GPU's NUMA node (numa_policy.hpp): the node
// comes from sysfs as CUDA names the GPU, and the thread's memory policy is
// preferred there while the buffer is allocated, then put back.
#include "cuda_common/numa_policy.hpp"

#include <gtest/gtest.h>

namespace fb::gpu {
namespace {

const std::string kHgx = std::string(FB_SOURCE_DIR) + "/tests/topo/fixtures/hgx-h100-8gpu-8ndr";

TEST(NumaPolicy, TheGpusNodeComesFromSysfsAsCudaSpellsItsBusId) {
  EXPECT_EQ(numa_node_of_pci(kHgx, "0000:1C:00.0"), 0);  // cudaDeviceGetPCIBusId's upper case
  EXPECT_EQ(numa_node_of_pci(kHgx, "0000:9A:00.0"), 1);  // a GPU of the second socket
  EXPECT_EQ(numa_node_of_pci(kHgx, "0000:77:00.0"), -1);  // not there
  EXPECT_EQ(numa_node_of_pci(kHgx, "not a bus id"), -1);
}

TEST(NumaPolicy, TheGpusLocalCpusComeFromSysfs) {
  const std::vector<int> near = local_cpus_of_pci(kHgx, "0000:9A:00.0");  // the second socket's GPU
  ASSERT_EQ(near.size(), 112u);
  EXPECT_EQ(near.front(), 56);
  EXPECT_TRUE(local_cpus_of_pci(kHgx, "0000:77:00.0").empty());
}

TEST(NumaPolicy, PreferredWhileAllocatingThenPutBack) {
  const std::string before = current_numa_policy();
  ASSERT_NE(before, "unknown");
  {
    PreferNumaNode on(0);
    ASSERT_TRUE(on.active());
    EXPECT_EQ(current_numa_policy(), "preferred 0");
  }
  EXPECT_EQ(current_numa_policy(), before);
  PreferNumaNode none(-1);  // the kernel said -1: nothing changes
  EXPECT_FALSE(none.active());
  EXPECT_EQ(current_numa_policy(), before);
}

}  // namespace
}  // namespace fb::gpu
