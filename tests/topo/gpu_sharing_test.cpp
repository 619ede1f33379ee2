// Whether a GPU is the job's alone: NVML's processes (named from /proc),
// compute mode and MIG mode, through the fake NVML. Names come from this
// machine's real /proc: this test process stands in for "another process".
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fabricbench/topo/inventory.hpp"
#include "fabricbench/topo/report.hpp"
#include "fake_nvml.hpp"

namespace fb::topo {
namespace {

using json = nlohmann::ordered_json;

constexpr unsigned kNoSuchPid = 0x7ffffff0u;  // above any pid_max Linux allows (2^22)
constexpr std::uint64_t kGiB = 1ull << 30;

test::FakeNvml h200_with(std::vector<GpuProcess> processes) {
  auto nvml = test::fake_h200_vm();
  nvml.gpus[0].processes = std::move(processes);
  return nvml;
}

GpuProcess process(unsigned pid, std::uint64_t bytes) { return {pid, bytes}; }

unsigned self() { return static_cast<unsigned>(getpid()); }

std::string joined(const std::vector<std::string>& flags) {
  std::string s;
  for (const auto& f : flags) s += f + "\n";
  return s;
}

TEST(GpuSharing, AnotherProcessOnTheGpuIsFlaggedWithItsNameAndMemory) {
  auto nvml = h200_with({process(self(), 30 * kGiB)});
  const auto s = read_gpu_sharing(Sysfs("/"), nvml, 0, {});
  ASSERT_TRUE(s.users);
  ASSERT_EQ(s.users->size(), 1u);
  EXPECT_FALSE(s.users->front().ours);
  ASSERT_TRUE(s.users->front().name) << s.users->front().name.why();
  const auto flags = sharing_flags(s);
  ASSERT_EQ(flags.size(), 1u) << joined(flags);
  EXPECT_NE(flags[0].find("in use by 1 other process: pid " + std::to_string(self()) + " (" + *s.users->front().name +
                          ", 30.0 GiB)"),
            std::string::npos)
      << flags[0];
}

TEST(GpuSharing, TheJobsOwnRanksAreNotFlagged) {
  auto nvml = h200_with({process(self(), 2 * kGiB)});
  const auto s = read_gpu_sharing(Sysfs("/"), nvml, 0, {12, static_cast<long>(self())});
  ASSERT_TRUE(s.users);
  ASSERT_EQ(s.users->size(), 1u);
  EXPECT_TRUE(s.users->front().ours);
  EXPECT_TRUE(sharing_flags(s).empty()) << joined(sharing_flags(s));
}

TEST(GpuSharing, APidThisNodeCannotSeeIsAnotherContainersAndStillFlagged) {
  auto nvml = h200_with({process(kNoSuchPid, 5 * kGiB), process(self(), kGiB)});
  const auto s = read_gpu_sharing(Sysfs("/"), nvml, 0, {static_cast<long>(self())});
  ASSERT_TRUE(s.users);
  ASSERT_EQ(s.users->size(), 2u);
  EXPECT_FALSE(s.users->front().name);
  EXPECT_NE(s.users->front().name.why().find("another container"), std::string::npos);
  const auto flags = sharing_flags(s);
  ASSERT_EQ(flags.size(), 1u) << joined(flags);
  EXPECT_NE(
      flags[0].find("1 other process: pid " + std::to_string(kNoSuchPid) + " (not in this node's /proc, 5.0 GiB)"),
      std::string::npos)
      << flags[0];
}

TEST(GpuSharing, MigAndAProhibitedComputeModeAreFlaggedAnExclusiveGpuIsNot) {
  auto nvml = test::fake_h200_vm();
  nvml.gpus[0].compute_mode = ComputeMode::exclusive_process;
  EXPECT_TRUE(sharing_flags(read_gpu_sharing(Sysfs("/"), nvml, 0, {})).empty());
  nvml.gpus[0].mig = true;
  nvml.gpus[0].compute_mode = ComputeMode::prohibited;
  const auto flags = sharing_flags(read_gpu_sharing(Sysfs("/"), nvml, 0, {}));
  ASSERT_EQ(flags.size(), 2u) << joined(flags);
  EXPECT_NE(flags[0].find("MIG mode on"), std::string::npos) << flags[0];
  EXPECT_NE(flags[1].find("compute mode prohibited"), std::string::npos) << flags[1];
}

// The whole inventory: the flag carries the GPU's name, and the record line
// holds the facts with the unknown ones' reasons.
TEST(GpuSharing, TheInventoryLineRecordsModesProcessesAndFlags) {
  auto nvml = h200_with({process(kNoSuchPid, 5 * kGiB)});
  nvml.gpus[0].compute_mode = ComputeMode::exclusive_process;
  const LinkedVersions linked{"13.0", "13.0", "2.28.9"};
  const json line = to_json(read_inventory(Sysfs(std::string(FB_TOPO_FIXTURES) + "/h200-vm"), nvml, linked,
                                           {0, 0, 0, "node-a", {}}, CudaView{}));
  const json& gpu = line["gpus"][0];
  EXPECT_EQ(gpu["compute_mode"], "exclusive_process");
  EXPECT_EQ(gpu["mig"], false);
  ASSERT_EQ(gpu["processes"].size(), 1u);
  EXPECT_EQ(gpu["processes"][0]["pid"], kNoSuchPid);
  EXPECT_EQ(gpu["processes"][0]["used_memory_bytes"], 5 * kGiB);
  EXPECT_EQ(gpu["processes"][0]["ours"], false);
  EXPECT_TRUE(gpu["processes"][0]["name"].is_null());
  EXPECT_TRUE(gpu["processes"][0]["unknown"]["name"].is_string());
  ASSERT_FALSE(line["flags"].empty());
  EXPECT_EQ(line["flags"].back().get<std::string>().rfind("GPU0: in use by 1 other process", 0), 0u) << line["flags"];
}

TEST(GpuSharing, CallsTheDriverLacksLeaveTheFactsUnknownWithTheReasonAndNoFlag) {
  auto nvml = test::fake_h200_vm();
  nvml.gpus[0].failing = {"processes", "compute_mode", "mig"};
  const auto s = read_gpu_sharing(Sysfs("/"), nvml, 0, {});
  EXPECT_FALSE(s.users);
  EXPECT_NE(s.users.why().find("processes"), std::string::npos) << s.users.why();
  EXPECT_FALSE(s.compute_mode);
  EXPECT_FALSE(s.mig);
  EXPECT_TRUE(sharing_flags(s).empty());
  const LinkedVersions linked{"13.0", "13.0", "2.28.9"};
  const json line = to_json(read_inventory(Sysfs(std::string(FB_TOPO_FIXTURES) + "/h200-vm"), nvml, linked,
                                           {0, 0, 0, "node-a", {}}, CudaView{}));
  const json& gpu = line["gpus"][0];
  EXPECT_TRUE(gpu["processes"].is_null());
  EXPECT_TRUE(gpu["unknown"]["processes"].is_string());
  EXPECT_TRUE(gpu["unknown"]["compute_mode"].is_string());
}

}  // namespace
}  // namespace fb::topo
