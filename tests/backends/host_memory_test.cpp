// The host-memory figure the fit check uses: MemAvailable, or the memory
// cgroup's headroom when that is smaller (v1 and v2, limits on ancestors).
#include "mpi_host/host_memory.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <stdlib.h>

namespace fb {
namespace {

namespace fs = std::filesystem;
constexpr std::uint64_t GiB = 1ull << 30;

class HostMemoryTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fb_hostmem_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) const {
    const fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void meminfo(std::uint64_t available) const {
    put("proc/meminfo", "MemTotal:       25165824 kB\nMemAvailable:   " + std::to_string(available / 1024) + " kB\n");
  }
  std::string root_;
};

TEST_F(HostMemoryTree, WithoutACgroupLimitMemAvailableCounts) {
  meminfo(20 * GiB);
  put("proc/self/cgroup", "0::/\n");
  put("sys/fs/cgroup/memory.max", "max\n");  // the root of a v2 tree has no limit file; "max" means none
  const auto m = available_host_memory(root_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->bytes, 20 * GiB);
  EXPECT_EQ(m->source, "MemAvailable");
}

TEST_F(HostMemoryTree, CgroupV2LimitBindsBelowMemAvailable) {
  // The case found: a 3 GiB job cgroup on a node with 20 GiB free let -b 4G through to an OOM kill.
  meminfo(20 * GiB);
  put("proc/self/cgroup", "0::/slurm/job42\n");
  put("sys/fs/cgroup/slurm/job42/memory.max", std::to_string(3 * GiB) + "\n");
  put("sys/fs/cgroup/slurm/job42/memory.current", std::to_string(GiB) + "\n");
  // Half of what is in use is page cache the kernel can drop: it is room too.
  put("sys/fs/cgroup/slurm/job42/memory.stat", "anon 536870912\ninactive_file " + std::to_string(GiB / 2) + "\n");
  const auto m = available_host_memory(root_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->bytes, 3 * GiB - GiB / 2);
  EXPECT_NE(m->source.find("slurm/job42"), std::string::npos) << m->source;
}

TEST_F(HostMemoryTree, ALimitOnAnAncestorBindsToo) {
  meminfo(20 * GiB);
  put("proc/self/cgroup", "0::/slurm/job42/step0\n");
  put("sys/fs/cgroup/slurm/job42/step0/memory.max", "max\n");
  put("sys/fs/cgroup/slurm/job42/step0/memory.current", "0\n");
  put("sys/fs/cgroup/slurm/job42/memory.max", std::to_string(2 * GiB) + "\n");
  put("sys/fs/cgroup/slurm/job42/memory.current", std::to_string(GiB / 4) + "\n");
  const auto m = available_host_memory(root_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->bytes, 2 * GiB - GiB / 4);
  EXPECT_NE(m->source.find("job42 "), std::string::npos) << m->source;
}

TEST_F(HostMemoryTree, CgroupV1MemoryControllerCounts) {
  meminfo(20 * GiB);
  put("proc/self/cgroup", "12:pids:/\n4:memory:/docker/abc\n0::/\n");
  put("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", std::to_string(3 * GiB) + "\n");
  put("sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes", std::to_string(GiB) + "\n");
  put("sys/fs/cgroup/memory/docker/abc/memory.stat", "cache 0\ntotal_inactive_file 0\n");
  // v1's "no limit" is a page-rounded 2^63: MemAvailable stays the figure at the root.
  put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  put("sys/fs/cgroup/memory/memory.usage_in_bytes", std::to_string(5 * GiB) + "\n");
  const auto m = available_host_memory(root_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->bytes, 2 * GiB);
}

TEST_F(HostMemoryTree, NothingReadableIsUnknown) { EXPECT_FALSE(available_host_memory(root_)); }

}  // namespace
}  // namespace fb
