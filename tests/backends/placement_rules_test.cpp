// Where ranks run on a GPU node, decided on plain values (placement_rules.hpp):
// every launcher layout of an 8-GPU node, two ranks on one GPU, and the
// lowest GPU of a mixed job.
#include "cuda_common/placement_rules.hpp"

#include <gtest/gtest.h>

namespace fb::gpu {
namespace {

std::vector<PlacedRank> node_of(const std::vector<std::string>& buses) {
  std::vector<PlacedRank> out;
  for (std::size_t i = 0; i < buses.size(); ++i) out.push_back({static_cast<int>(100 + i), buses[i]});
  return out;
}

TEST(Placement, AllGpusVisibleToEveryRankGivesEachItsLocalIndex) {
  for (int local = 0; local < 8; ++local) {
    const DeviceChoice c = choose_device(-1, local, 8, "n1");
    EXPECT_TRUE(c.error.empty());
    EXPECT_EQ(c.device, local);
  }
}

TEST(Placement, OneGpuVisiblePerRankIsDeviceZeroOnEveryRank) {
  // Slurm --gpus-per-task=1 / --gpu-bind=single:1, or CUDA_VISIBLE_DEVICES per rank: ranks 1..7 were refused.
  std::vector<std::string> buses;
  for (int local = 0; local < 8; ++local) {
    const DeviceChoice c = choose_device(-1, local, 1, "n1");
    EXPECT_TRUE(c.error.empty()) << c.error;
    EXPECT_EQ(c.device, 0);
    buses.push_back("0000:" + std::to_string(10 + local) + ":00.0");  // each its own physical GPU
  }
  const auto node = node_of(buses);
  for (std::size_t me = 0; me < node.size(); ++me) EXPECT_EQ(shared_gpu_error(node, me, 0, 1, "n1"), "");
}

TEST(Placement, BlocksOfTwoGpusPerRankStayApart) {
  EXPECT_EQ(choose_device(-1, 0, 2, "n1").device, 0);
  EXPECT_EQ(choose_device(-1, 1, 2, "n1").device, 1);
}

TEST(Placement, TwoRanksOnOnePhysicalGpuAreRefusedByBusId) {
  // Every rank sees the same single GPU: all on device 0, the same bus.
  const auto node = node_of({"0000:1B:00.0", "0000:1B:00.0"});
  EXPECT_EQ(shared_gpu_error(node, 0, 0, 1, "n1"), "");  // the first keeps it
  const std::string e = shared_gpu_error(node, 1, 0, 1, "n1");
  EXPECT_NE(e.find("ranks 100 and 101 are both on CUDA device 0 (0000:1B:00.0) of host n1"), std::string::npos) << e;
  EXPECT_NE(e.find("launch at most one rank per GPU"), std::string::npos) << e;
}

TEST(Placement, MoreRanksThanVisibleGpusWrapAndAreRefusedOnTheSharedOnes) {
  EXPECT_EQ(choose_device(-1, 5, 4, "n1").device, 1);
  const auto node = node_of({"A", "B", "C", "D", "A", "B"});
  EXPECT_EQ(shared_gpu_error(node, 3, 3, 4, "n1"), "");
  EXPECT_NE(shared_gpu_error(node, 4, 0, 4, "n1").find("ranks 100 and 104"), std::string::npos);
  EXPECT_NE(shared_gpu_error(node, 5, 1, 4, "n1").find("host n1 runs 6 ranks and this rank sees 4"), std::string::npos);
}

TEST(Placement, DeviceOptionOutOfRangeAndNoDeviceAreSaid) {
  EXPECT_EQ(choose_device(3, 0, 8, "n1").device, 3);
  EXPECT_NE(choose_device(8, 0, 8, "n1").error.find("--device 8: host n1 has 8 CUDA device(s), 0 to 7"),
            std::string::npos);
  EXPECT_NE(choose_device(-1, 0, 0, "n1").error.find("no CUDA device"), std::string::npos);
}

TEST(Placement, TheLowestGpuOfAMixedJobDecidesFp8ForEveryRank) {
  const std::vector<std::string> job{encode({9, 0, 0, "h100a"}), encode({10, 0, 1, "b200"}), encode({8, 0, 2, "a100"}),
                                     encode({0, 0, 3, "nogpu"})};
  const Capability lowest = lowest_capability(job);
  EXPECT_EQ(lowest.major, 8);
  EXPECT_EQ(lowest.rank, 2);
  const Support s = fp8_reduction_support(lowest);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.why.find("rank 2 (host a100) has a 8.0 GPU"), std::string::npos) << s.why;
  EXPECT_TRUE(fp8_reduction_support(lowest_capability({encode({9, 0, 0, "h"}), encode({10, 0, 1, "b"})})).ok);
  EXPECT_TRUE(fp8_reduction_support(lowest_capability({})).ok);  // no GPU anywhere: others refuse first
}

}  // namespace
}  // namespace fb::gpu

namespace fb::gpu {
namespace {

TEST(PeerCopy, PeersAreToldByBusIdNotByEachProcesssIndex) {
  // Issue 34, defect 2: under one GPU per rank both ranks say device 0, yet
  // they are two GPUs; the row was skipped as "share GPU 0".
  const RankGpu a{"n1", "0000:1B:00.0", 0};
  const RankGpu b{"n1", "0000:43:00.0", 0};
  EXPECT_EQ(peer_copy_refusal(a, b, 0, 1, "copy_peer"), "");
  // With shuffled visible orders one GPU has two indices: still one GPU.
  const RankGpu same{"n1", "0000:1B:00.0", 5};
  EXPECT_NE(peer_copy_refusal(a, same, 0, 1, "copy_peer").find("share the GPU at 0000:1B:00.0"), std::string::npos);
  const RankGpu elsewhere{"n2", "0000:43:00.0", 1};
  EXPECT_NE(peer_copy_refusal(a, elsewhere, 0, 1, "copy_peer").find("hosts n1 and n2"), std::string::npos);
  EXPECT_NE(peer_copy_refusal(a, RankGpu{"n1", "", 1}, 0, 1, "copy_peer").find("no GPU bus id"), std::string::npos);
}

}  // namespace
}  // namespace fb::gpu
