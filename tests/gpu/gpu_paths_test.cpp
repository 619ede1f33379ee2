// What only a GPU can show of issue 18's fixes, on one GPU under `mpirun -np 1`
// (scripts/device-check.sh). Multi-GPU and multi-node checks are listed there.
// Every test skips, saying why, where there is no usable GPU.
#include <gtest/gtest.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cuda_common/cuda_devices.hpp"
#include "cuda_common/device_check.hpp"
#include "cuda_common/gpu_memory.hpp"
#include "cuda_common/numa_policy.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/pattern.hpp"
#include "fabricbench/backends/gpu.hpp"
#include "fabricbench/backends/registry.hpp"

namespace fb {
namespace {

#define SKIP_WITHOUT_GPU()                                       \
  do {                                                           \
    const std::string why = gpu_absent_reason();                 \
    if (!why.empty()) {                                          \
      GTEST_SKIP() << "no CUDA device: " << why;                 \
    }                                                            \
  } while (0)

OpSpec all_reduce(std::uint64_t bytes, int nranks) {
  OpSpec spec;
  spec.dtype = Dtype::float32;
  spec.layout = layout_for(Op::all_reduce, spec.dtype, bytes, nranks);
  return spec;
}

// Item 8: in-place reduce_scatter's block starts at rank x block x 2 bytes for bfloat16.
TEST(GpuPaths, PoisonAtA2ByteOffsetIsNoMisalignedStore) {
  SKIP_WITHOUT_GPU();
  gpu::Buffer b(gpu::cuda_devices(), gpu::MemoryKind::device, 0);
  ASSERT_EQ(b.grow(64), "");
  auto* at = static_cast<unsigned char*>(b.data()) + 2;
  gpu::poison(at, 30, nullptr, 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  unsigned char host[30] = {};
  ASSERT_EQ(cudaMemcpy(host, at, sizeof(host), cudaMemcpyDeviceToHost), cudaSuccess);
  for (unsigned char c : host) EXPECT_EQ(c, pattern::kPoisonByte);
}

// Item 6: the watchdog's abort is a flag that returns at once; the engine's
// thread aborts the communicator at its next wait and gets an error, not a hang.
TEST(GpuPaths, AbortFromAnotherThreadEndsTheNextWaitOnTheEnginesThread) {
  SKIP_WITHOUT_GPU();
  const Comm world = Comm::world();
  auto backend = find_backend("nccl")->make();
  ASSERT_TRUE(backend->setup(world, RunOptions{}).ok);
  auto group = backend->open(world);
  const OpSpec spec = all_reduce(64 << 20, world.size());
  ASSERT_TRUE(group->allocate(spec).ok);
  auto op = group->prepare(spec);
  op->run();  // connected, working
  const auto t0 = std::chrono::steady_clock::now();
  std::thread([&] { group->abort(); }).join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
  EXPECT_THROW(op->run(), RunError);
}

// Item 4: the same with a captured CUDA graph holding the communicator: the
// abort drops the graph first and returns (the test's timeout is the hang).
TEST(GpuPaths, AbortWithACapturedGraphReturns) {
  SKIP_WITHOUT_GPU();
  const Comm world = Comm::world();
  auto backend = find_backend("nccl")->make();
  RunOptions options;
  options.graph = true;
  ASSERT_TRUE(backend->setup(world, options).ok);
  auto group = backend->open(world);
  const OpSpec spec = all_reduce(1 << 20, world.size());
  ASSERT_TRUE(group->allocate(spec).ok);
  auto op = group->prepare(spec);
  std::vector<double> start(20), duration(20);
  op->run_timed({start, duration});
  group->abort();
  EXPECT_THROW(op->run_timed({start, duration}), RunError);
  op.reset();
  group.reset();  // ncclCommAbort/destroy must come back
}

// Item 7: groups split from the world's communicator, one after another, measure and check.
TEST(GpuPaths, SplitGroupsOneAfterAnotherAreExact) {
  SKIP_WITHOUT_GPU();
  const Comm world = Comm::world();
  auto backend = find_backend("nccl")->make();
  ASSERT_TRUE(backend->setup(world, RunOptions{}).ok);
  for (int pass = 0; pass < 3; ++pass) {
    auto group = backend->open(world);
    const OpSpec spec = all_reduce(1 << 20, world.size());
    ASSERT_TRUE(group->allocate(spec).ok);
    auto op = group->prepare(spec);
    op->fill_check();
    op->run();
    EXPECT_EQ(op->count_wrong(), 0u) << "pass " << pass;
    EXPECT_EQ(group->path().rfind("unknown", 0), std::string::npos) << group->path();
  }
}

// Item 13: pinned buffers' pages on the GPU's NUMA node (when the kernel names one).
TEST(GpuPaths, PinnedBuffersLandOnTheGpusNumaNode) {
  SKIP_WITHOUT_GPU();
  char bus[32] = {};
  ASSERT_EQ(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0), cudaSuccess);
  const int node = gpu::numa_node_of_pci("/", bus);
  if (node < 0) GTEST_SKIP() << "the kernel names no NUMA node for GPU 0 (" << bus << "): nothing to place";
  gpu::Buffer b(gpu::cuda_devices(), gpu::MemoryKind::pinned, 0);
  ASSERT_EQ(b.grow(64 << 20), "");
  int where = -1;
  ASSERT_EQ(::syscall(SYS_get_mempolicy, &where, nullptr, 0UL, b.data(), MPOL_F_NODE | MPOL_F_ADDR), 0);
  EXPECT_EQ(where, node) << "GPU 0 " << bus;
}

}  // namespace
}  // namespace fb
