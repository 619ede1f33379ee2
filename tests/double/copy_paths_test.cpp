// The cuda backend's own code, multi-rank, through the host device double
// (tests/support/sim_devices.hpp): every copy path checked under the GPU
// layouts a job meets (every GPU visible to every rank; one GPU per rank, as
// Slurm's --gpus-per-task=1 gives; each rank with its own visible order),
// peers told by PCI bus id, pair rows labelled by the copying rank, and host
// and device memory that does not fit skipped rather than taken. Run under
// mpirun with 4 ranks on one simulated 8-GPU node, and with 16 on two
// (FABRICBENCH_RANKS_PER_NODE=8).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>

#include "capture_sink.hpp"
#include "cuda_copy/cuda_copy_backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/scope.hpp"
#include "sim_devices.hpp"

namespace fb {
namespace {

using test::SimDevices;

int world_rank() { return Comm::world().rank(); }
// This rank's index on its node, and its node's ranks (collective).
int local_rank() { return split_nodes(Comm::world()).rank(); }
int node_size() { return split_nodes(Comm::world()).size(); }

// The GPU layouts: which of the node's GPUs the node's rank r sees, in its CUDA order.
std::vector<int> every_gpu(int) {
  std::vector<int> v(8);
  std::iota(v.begin(), v.end(), 0);
  return v;
}
std::vector<int> one_per_rank(int r) { return {r}; }
// Rank r sees GPUs r and r+1 swapped: its index r is GPU r+1 (mod 8), and
// the same GPU has different indices in different ranks.
std::vector<int> own_order(int r) {
  std::vector<int> v = every_gpu(r);
  std::swap(v[static_cast<std::size_t>(r % 8)], v[static_cast<std::size_t>((r + 1) % 8)]);
  return v;
}

RunOptions copies(std::vector<Op> ops, std::uint64_t min_bytes = 1024, std::uint64_t max_bytes = 64 << 10) {
  RunOptions o;
  o.backend = "cuda";
  o.ops = std::move(ops);
  o.grid = {min_bytes, max_bytes, 4.0, 0};
  o.iters = 3;
  o.warmup = 1;
  o.in_place = false;
  o.check = true;
  return o;
}

const std::vector<Op> kLocalCopies = {Op::copy_d2d_ce,       Op::copy_d2d_sm,       Op::copy_h2d_pinned,
                                      Op::copy_d2h_pinned,   Op::copy_h2d_pageable, Op::copy_d2h_pageable,
                                      Op::copy_bidir_pinned, Op::kernel_launch};

struct SimRun {
  std::vector<Measurement> rows;  // rank 0's
  std::vector<Skip> skips;
};

SimRun run_on(SimDevices& sim, const RunOptions& o, const std::string& host_root = "/") {
  const Comm world = Comm::world();
  auto backend = make_cuda_copy_backend(sim, host_root);
  test::CaptureSink sink;
  Runner runner(world, map_nodes(world), *backend, o, &sink);
  runner.preflight();
  runner.run();
  return {sink.rows, sink.skips};
}

std::vector<const Measurement*> rows_of(const SimRun& r, Op op) {
  std::vector<const Measurement*> out;
  for (const auto& m : r.rows)
    if (m.op == name(op)) out.push_back(&m);
  return out;
}

std::string skip_reasons(const SimRun& r, Op op) {
  std::string out;
  for (const auto& s : r.skips)
    if (s.op == name(op)) out += s.reason + "\n";
  return out;
}

// Every rank's GPU (the one placement made current), by PCI bus id.
std::vector<std::string> placed_bus_ids(SimDevices& sim) {
  return Comm::world().allgather_strings(sim.props(sim.current()).pci_bus_id);
}

// The GPUs rank `from` peer-copied to, as it saw them, on every rank.
std::string peer_copy_targets(const SimDevices& sim, int from) {
  std::string mine;
  for (const auto& c : sim.peer_copies)
    if (const std::string e = c.to_bus_id + (c.peer_access ? " p2p " : " staged "); mine.find(e) == std::string::npos)
      mine += e;
  return Comm::world().bcast_string_quiet(mine, from);
}

class Layouts : public ::testing::TestWithParam<std::function<std::vector<int>(int)>> {};

TEST_P(Layouts, EveryLocalCopyPathIsMeasuredAndVerified) {
  ASSERT_LE(node_size(), 8) << "one simulated 8-GPU node takes at most 8 ranks";
  SimDevices sim(test::hgx_node(), GetParam()(local_rank()));
  const SimRun r = run_on(sim, copies(kLocalCopies));
  if (world_rank() != 0) return;
  for (Op op : kLocalCopies) {
    const auto rows = rows_of(r, op);
    // kernel_launch runs at 8 B and below only: none of these sizes.
    if (op == Op::kernel_launch) {
      EXPECT_TRUE(rows.empty());
      EXPECT_NE(skip_reasons(r, op).find("sizes up to 8 B"), std::string::npos) << skip_reasons(r, op);
      continue;
    }
    ASSERT_EQ(rows.size(), 4u) << name(op) << ": " << skip_reasons(r, op);
    for (const Measurement* m : rows) {
      EXPECT_EQ(m->wrong, 0) << name(op) << " " << m->bytes;
      EXPECT_EQ(m->nranks, Comm::world().size());
      EXPECT_GT(m->time.median_us, 0) << name(op);
    }
  }
}

std::string layout_name(const ::testing::TestParamInfo<Layouts::ParamType>& info) {
  static const char* const names[] = {"EveryGpuVisible", "OneGpuPerRank", "EachRankItsOwnOrder"};
  return names[info.index];
}

INSTANTIATE_TEST_SUITE_P(SimCopies, Layouts, ::testing::Values(every_gpu, one_per_rank, own_order), layout_name);

// Issue 34, defect 2: the peer is told by PCI bus id. By its own device
// index, rank 0 would copy to its index 1, GPU 0, where rank 1 (index 1 of
// its own order) runs on GPU 2.
TEST(SimCopies, APeerCopyLandsOnThePeerRanksGpuWhateverEachRanksVisibleOrder) {
  SimDevices sim(test::hgx_node(), own_order(local_rank()));
  const SimRun r = run_on(sim, copies({Op::copy_peer, Op::copy_peer_staged}));
  const std::vector<std::string> bus = placed_bus_ids(sim);
  ASSERT_NE(bus[0], bus[1]);
  const std::string targets = peer_copy_targets(sim, 0);
  if (world_rank() != 0) return;
  EXPECT_EQ(rows_of(r, Op::copy_peer).size(), 4u) << skip_reasons(r, Op::copy_peer);
  EXPECT_EQ(rows_of(r, Op::copy_peer_staged).size(), 4u) << skip_reasons(r, Op::copy_peer_staged);
  for (const Measurement* m : rows_of(r, Op::copy_peer)) EXPECT_EQ(m->wrong, 0);
  EXPECT_EQ(targets, bus[1] + " p2p " + bus[1] + " staged ") << "rank 1 runs on " << bus[1];
}

// Issue 34, defect 3: a pair's row carries the copying rank's label, in its
// own numbering: rank 2 (GPU 3, its index 2) copies to rank 3's GPU 4, its
// index 4. Rank 0's own label read "GPU0->GPU-1".
TEST(SimCopies, APairsRowIsLabelledByTheCopyingRank) {
  SimDevices sim(test::hgx_node(), own_order(local_rank()));
  RunOptions o = copies({Op::copy_peer, Op::copy_peer_staged}, 4096, 4096);
  o.peer_a = 2;
  o.peer_b = 3;
  const SimRun r = run_on(sim, o);
  if (world_rank() != 0) return;
  ASSERT_EQ(rows_of(r, Op::copy_peer).size(), 1u) << skip_reasons(r, Op::copy_peer);
  EXPECT_EQ(rows_of(r, Op::copy_peer)[0]->path, "GPU2->GPU4 peer access");
  ASSERT_EQ(rows_of(r, Op::copy_peer_staged).size(), 1u);
  EXPECT_EQ(rows_of(r, Op::copy_peer_staged)[0]->path, "GPU2->GPU4 staged");
  EXPECT_EQ(rows_of(r, Op::copy_peer)[0]->peer_a, 2);
}

// Under one GPU per rank the copying rank cannot see its peer's GPU: the
// pair is skipped, naming the fix, rather than copied to its own GPU 0.
TEST(SimCopies, OneGpuPerRankSkipsPeerCopiesNamingTheFix) {
  SimDevices sim(test::hgx_node(), one_per_rank(local_rank()));
  const SimRun r = run_on(sim, copies({Op::copy_peer}, 4096, 4096));
  EXPECT_TRUE(sim.peer_copies.empty());
  if (world_rank() != 0) return;
  EXPECT_TRUE(rows_of(r, Op::copy_peer).empty());
  const std::string why = skip_reasons(r, Op::copy_peer);
  EXPECT_NE(why.find("is not visible to rank 0"), std::string::npos) << why;
  EXPECT_NE(why.find("--gpus-per-task=1"), std::string::npos) << why;
}

// On a PCIe node GPUs of two sockets have no P2P: copy_peer is skipped with
// the reason, copy_peer_staged runs through the host.
TEST(SimCopies, GpusWithoutAPeerPathCopyStagedOnly) {
  if (node_size() > 4) GTEST_SKIP() << "a 4-GPU node takes at most 4 ranks";
  SimDevices sim(test::pcie_node(), std::vector<int>{0, 1, 2, 3});
  RunOptions o = copies({Op::copy_peer, Op::copy_peer_staged}, 4096, 4096);
  o.peer_a = 0;
  o.peer_b = 2;  // GPU 2: the other socket
  const SimRun r = run_on(sim, o);
  const std::string targets = peer_copy_targets(sim, 0);
  if (world_rank() != 0) return;
  EXPECT_NE(skip_reasons(r, Op::copy_peer).find("cannot access GPU 2"), std::string::npos)
      << skip_reasons(r, Op::copy_peer);
  ASSERT_EQ(rows_of(r, Op::copy_peer_staged).size(), 1u);
  EXPECT_EQ(rows_of(r, Op::copy_peer_staged)[0]->wrong, 0);
  EXPECT_EQ(targets, "00FB:12:00.0 staged ");
}

// Issue 34, defect 6: pinned and pageable buffers come out of the node's host
// memory, which its n ranks take at once. With 2n MiB available, 1 MiB each
// fits (n MiB of 1.8n usable); 4 MiB each, 3 MiB more than each holds, does
// not: skipped, named.
TEST(SimCopies, HostBuffersThatWouldNotFitTheNodeAreSkippedNotTaken) {
  const int n = node_size();
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() /
      fmt::format("fb-simhost-{}", Comm::world().bcast_string_quiet(std::to_string(::getpid()), 0));
  if (world_rank() == 0) {
    std::filesystem::create_directories(root / "proc");
    std::ofstream(root / "proc/meminfo") << fmt::format("MemTotal: {} kB\nMemAvailable: {} kB\n", 4096 * n, 2048 * n);
  }
  Comm::world().barrier();
  SimDevices sim(test::hgx_node(), every_gpu(0));
  const SimRun r = run_on(sim, copies({Op::copy_h2d_pinned, Op::copy_d2h_pageable}, 256 << 10, 4 << 20), root);
  Comm::world().barrier();
  if (world_rank() != 0) return;
  std::filesystem::remove_all(root);
  for (Op op : {Op::copy_h2d_pinned, Op::copy_d2h_pageable}) {
    std::vector<std::uint64_t> measured;
    for (const Measurement* m : rows_of(r, op)) measured.push_back(m->bytes);
    EXPECT_EQ(measured, (std::vector<std::uint64_t>{256 << 10, 1 << 20})) << name(op);
    const std::string why = skip_reasons(r, op);
    EXPECT_NE(why.find(fmt::format("3 MiB more host memory per rank ({} MiB for the {} ranks of this node)", 3 * n, n)),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("lower --maxbytes"), std::string::npos) << why;
  }
}

// Device memory is checked per size: what does not fit is skipped with the
// GPU's free memory, and the sweep goes on.
TEST(SimCopies, DeviceMemoryThatDoesNotFitIsSkippedPerSize) {
  SimDevices sim(test::hgx_node(std::uint64_t{1} << 20), every_gpu(0));
  const SimRun r = run_on(sim, copies({Op::copy_d2d_ce, Op::copy_h2d_pinned}, 256 << 10, 1 << 20));
  if (world_rank() != 0) return;
  // Two 512 KiB buffers fill the 1 MiB GPU; one 1 MiB buffer does too.
  EXPECT_EQ(rows_of(r, Op::copy_d2d_ce).size(), 1u);
  EXPECT_EQ(rows_of(r, Op::copy_h2d_pinned).size(), 2u);
  const std::string why = skip_reasons(r, Op::copy_d2d_ce);
  EXPECT_NE(why.find("out of memory (GPU 0 has"), std::string::npos) << why;
}

// Two ranks on one physical GPU are refused by bus id before anything runs,
// on every rank alike.
TEST(SimCopies, TwoRanksOnOneGpuAreRefusedNamingTheGpu) {
  SimDevices sim(test::hgx_node(), {3});
  try {
    run_on(sim, copies({Op::copy_d2d_ce}));
    ADD_FAILURE() << "placed four ranks on one GPU";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("00FB:13:00.0"), std::string::npos) << e.what();
  }
}

// With --graph each batch is captured once and replayed once per call: the
// bidirectional copy's side stream joins the capture, and every row checks.
TEST(SimCopies, GraphCapturedCopiesRunAndVerify) {
  SimDevices sim(test::hgx_node(), every_gpu(0));
  RunOptions o = copies({Op::copy_d2d_ce, Op::copy_bidir_pinned, Op::copy_peer});
  o.graph = true;
  const SimRun r = run_on(sim, o);
  if (world_rank() != 0) return;
  for (Op op : {Op::copy_d2d_ce, Op::copy_bidir_pinned, Op::copy_peer}) {
    ASSERT_EQ(rows_of(r, op).size(), 4u) << name(op) << ": " << skip_reasons(r, op);
    for (const Measurement* m : rows_of(r, op)) EXPECT_EQ(m->wrong, 0) << name(op);
  }
}

// A peer copy is between two GPUs of one node: ranks of two nodes are
// refused by node, even where their GPUs have the same bus id.
TEST(SimCopies, RanksOfTwoNodesAreNoPeers) {
  const int n = node_size();
  if (n == Comm::world().size()) GTEST_SKIP() << "needs two nodes (FABRICBENCH_RANKS_PER_NODE)";
  SimDevices sim(test::hgx_node(), every_gpu(0));
  RunOptions o = copies({Op::copy_peer}, 4096, 4096);
  o.peer_b = n;  // the first rank of the second node
  const SimRun r = run_on(sim, o);
  EXPECT_TRUE(sim.peer_copies.empty());
  if (world_rank() != 0) return;
  const std::string why = skip_reasons(r, Op::copy_peer);
  EXPECT_NE(why.find(fmt::format("copies between GPUs of one node; ranks 0 and {} are on hosts", n)), std::string::npos)
      << why;
}

}  // namespace
}  // namespace fb
