// NVML's view (tests/support/sim_nvml.hpp) and the backends' placement on one
// fixture: what topo's inventory, its GPU counters and its sharing check say
// about a rank's GPU is held against the GPU the nccl backend placed the rank
// on, under the layouts a job meets. Each rank's facts are gathered to rank
// 0, which asserts, so a mismatch on any rank is printed. Run under mpirun
// with 4 ranks on one simulated 8-GPU node, on two nodes of two
// (FABRICBENCH_RANKS_PER_NODE=2), and the placement with 16 ranks on two.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <numeric>
#include <optional>
#include <regex>
#include <set>

#include "capture_sink.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/topo/counters.hpp"
#include "fabricbench/topo/inventory.hpp"
#include "gpu_backends.hpp"
#include "nccl/nccl_backend.hpp"
#include "sim_devices.hpp"
#include "sim_nccl.hpp"
#include "sim_nvml.hpp"

namespace fb::simnvml_test {
namespace {

using test::SimDevices;
using test::SimNvml;

// The layouts (copy_paths_test.cpp's, and a reversed order): which of the
// node's GPUs local rank r sees, in its CUDA order.
std::vector<int> all_eight(int) {
  std::vector<int> v(8);
  std::iota(v.begin(), v.end(), 0);
  return v;
}
std::vector<int> own_gpu(int r) { return {r}; }
std::vector<int> neighbour_first(int r) {  // rank r's index r is GPU r+1
  std::vector<int> v = all_eight(r);
  std::swap(v[static_cast<std::size_t>(r % 8)], v[static_cast<std::size_t>((r + 1) % 8)]);
  return v;
}
std::vector<int> reversed(int) { return {7, 6, 5, 4, 3, 2, 1, 0}; }

// CUDA_VISIBLE_DEVICES naming `gpus` (indices into the fixture) by index.
std::string as_indices(const std::vector<int>& gpus) { return fmt::format("{}", fmt::join(gpus, ",")); }

// A UUID cut to its first `digits` hex digits after "GPU-" (32: whole), the
// short form CUDA accepts while it names one GPU.
std::string uuid_prefix(const std::string& uuid, std::size_t digits) {
  std::string entry = "GPU-";
  for (std::size_t i = entry.size(); i < uuid.size() && digits > 0; ++i) {
    entry += uuid[i];
    if (uuid[i] != '-') --digits;
  }
  return entry;
}

// CUDA_VISIBLE_DEVICES naming `gpus` by UUID, as Slurm's and Kubernetes'
// device plugins hand them out: whole, or each cut to `digits` hex digits.
std::string as_uuids(const test::SimNode& fixture, const std::vector<int>& gpus, std::size_t digits = 32) {
  std::vector<std::string> entries;
  for (int g : gpus) entries.push_back(uuid_prefix(fixture.gpus.at(static_cast<std::size_t>(g)).uuid, digits));
  return fmt::format("{}", fmt::join(entries, ","));
}

// A UUID no GPU of the fixture has: a GPU of another node, as a job step
// handed another host's device would see.
std::string stranger_uuid(int node) { return test::hgx_node(test::kSimGpuBytes, node + 1000).gpus[0].uuid; }

// CUDA_VISIBLE_DEVICES as the layout gives it, for the inventory's
// CudaView::from_environment and the double's cuda_visible; the old value
// back at the end.
class VisibleDevices {
 public:
  explicit VisibleDevices(const std::string& list) {
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) old_ = v;
    setenv("CUDA_VISIBLE_DEVICES", list.c_str(), 1);
  }
  explicit VisibleDevices(const std::vector<int>& visible) : VisibleDevices(as_indices(visible)) {}
  ~VisibleDevices() {
    if (old_)
      setenv("CUDA_VISIBLE_DEVICES", old_->c_str(), 1);
    else
      unsetenv("CUDA_VISIBLE_DEVICES");
  }

 private:
  std::optional<std::string> old_;
};

int sim_ranks_per_node() {
  const char* forced = std::getenv("FABRICBENCH_RANKS_PER_NODE");
  return forced ? std::atoi(forced) : Comm::world().size();
}

// One small all_reduce through the nccl backend: placement as a job makes it.
void run_all_reduce(SimDevices& sim) {
  const Comm world = Comm::world();
  test::SimNccl lib(sim_ranks_per_node());
  auto backend = make_nccl_backend(sim, lib);
  RunOptions o;
  o.backend = "nccl";
  o.ops = {Op::all_reduce};
  o.grid = {1024, 1024, 2.0, 0};
  o.iters = 1;
  o.warmup = 0;
  o.in_place = false;
  test::CaptureSink sink;
  Runner runner(world, map_nodes(world), *backend, o, &sink);
  runner.preflight();
  runner.run();
  if (world.rank() == 0) {
    ASSERT_EQ(sink.rows.size(), 1u) << "the all_reduce did not run";
  }
}

// A sysfs root with nothing in it: the double's bus ids (domain 00fb) are in no real sysfs either.
class EmptyRoot {
 public:
  EmptyRoot() : dir_(std::filesystem::temp_directory_path() / fmt::format("fb-simnvml-{}", getpid())) {
    std::filesystem::create_directories(dir_);
  }
  ~EmptyRoot() { std::filesystem::remove_all(dir_); }
  topo::Sysfs sysfs() const { return topo::Sysfs(dir_); }

 private:
  std::filesystem::path dir_;
};

std::vector<long> node_pids(const Comm& node) {
  std::vector<long> pids;
  for (auto p : node.allgather_quiet(getpid())) pids.push_back(static_cast<long>(p));
  return pids;
}

// This rank's inventory through `nvml`, CUDA's view from the environment, as `topo` reads it.
topo::Inventory inventory_of(topo::Nvml& nvml, const Comm& node, std::vector<long> job_pids) {
  const EmptyRoot root;
  const topo::RankPlace place{Comm::world().rank(), 0, node.rank(), "sim", std::move(job_pids)};
  return topo::read_inventory(root.sysfs(), nvml, {}, place, topo::CudaView::from_environment(-1));
}

// The bus id of the inventory's rank GPU in the inventory's spelling, or why there is none.
std::string rank_gpu_bus(const topo::Inventory& inv) {
  if (!inv.rank_gpu) return "unknown: " + inv.rank_gpu.why();
  const auto& g = inv.gpus.at(static_cast<std::size_t>(*inv.rank_gpu));
  return g.bus_id ? *g.bus_id : "unknown: " + g.bus_id.why();
}

// The placed GPU's bus id (CUDA's spelling, "00FB:10:00.0") as the inventory spells it.
std::string placed_bus(SimDevices& sim) {
  const std::string cuda = sim.props(sim.current()).pci_bus_id;
  const auto sysfs = topo::sysfs_bus_id(cuda);
  return sysfs ? *sysfs : "unspellable: " + cuda;
}

// A layout: the CUDA_VISIBLE_DEVICES local rank r of node `node` is given.
struct Layout {
  const char* title;
  std::function<std::string(const test::SimNode& fixture, int node, int r)> list;
};

const Layout kLayouts[] = {
    {"EveryGpuVisible", [](const test::SimNode&, int, int r) { return as_indices(all_eight(r)); }},
    {"OneGpuPerRank", [](const test::SimNode&, int, int r) { return as_indices(own_gpu(r)); }},
    {"EachRankItsOwnOrder", [](const test::SimNode&, int, int r) { return as_indices(neighbour_first(r)); }},
    {"ReversedOrder", [](const test::SimNode&, int, int r) { return as_indices(reversed(r)); }},
    {"FullUuidsReversedOrder", [](const test::SimNode& f, int, int r) { return as_uuids(f, reversed(r)); }},
    {"UuidPrefixesEachRankItsOwnOrder",
     [](const test::SimNode& f, int, int r) { return as_uuids(f, neighbour_first(r), 8); }},
    // Rank r's own GPU, another host's, then its neighbour's: CUDA shows rank r its own GPU only.
    {"OwnUuidThenAnUnknownOne",
     [](const test::SimNode& f, int node, int r) {
       return as_uuids(f, own_gpu(r)) + "," + stranger_uuid(node) + "," + as_uuids(f, {(r + 1) % 8}, 8);
     }},
};

// gtest names a failing layout by its title, not its bytes.
void PrintTo(const Layout& layout, std::ostream* out) { *out << layout.title; }

class RankGpu : public ::testing::TestWithParam<Layout> {};

// The inventory picks the rank's GPU from NVML (PCI order) and
// CUDA_VISIBLE_DEVICES; the backend from the device layer's own numbering,
// the double reading the same CUDA_VISIBLE_DEVICES as CUDA would. Both must
// name one bus id, or topo's facts describe another GPU.
TEST_P(RankGpu, TheInventorysRankGpuIsTheGpuTheNcclBackendPlacedTheRankOn) {
  const Comm node = split_nodes(Comm::world());
  const int node_index = map_nodes(Comm::world()).node;
  const test::SimNode fixture = test::hgx_node(test::kSimGpuBytes, node_index);
  const std::string list = GetParam().list(fixture, node_index, node.rank());
  const VisibleDevices env(list);
  SimDevices sim(fixture, test::cuda_visible(fixture));
  run_all_reduce(sim);
  SimNvml nvml(fixture);
  test::node_holders(nvml, sim, node);
  const topo::Inventory inv = inventory_of(nvml, node, node_pids(node));
  const auto placed = Comm::world().allgather_strings(placed_bus(sim));
  const auto listed = Comm::world().allgather_strings(rank_gpu_bus(inv));
  const auto seen = Comm::world().allgather_strings(list);
  if (Comm::world().rank() != 0) return;
  for (std::size_t r = 0; r < placed.size(); ++r)
    EXPECT_EQ(listed[r], placed[r]) << "rank " << r << " with CUDA_VISIBLE_DEVICES=" << seen[r];
}

INSTANTIATE_TEST_SUITE_P(SimNvml, RankGpu, ::testing::ValuesIn(kLayouts),
                         [](const ::testing::TestParamInfo<Layout>& info) { return info.param.title; });

// Every simulated GPU has a UUID in NVML's form, its own on the node and
// across nodes, its first 8 digits included (CUDA_VISIBLE_DEVICES may name a
// GPU by them), and the same in every rank's fixture (each rank builds its
// own, and a UUID list is only good where every process reads it alike);
// NVML answers it.
TEST(SimNvml, EachSimulatedGpuHasItsOwnUuidInNvmlsForm) {
  const auto built = Comm::world().allgather_strings(as_uuids(test::hgx_node(), all_eight(0)));
  for (std::size_t r = 1; r < built.size(); ++r) EXPECT_EQ(built[r], built[0]) << "rank " << r << "'s fixture";
  const std::regex form("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  std::set<std::string> prefixes;
  std::size_t gpus = 0;
  for (int n : {0, 1})
    for (const test::SimNode& fixture :
         {test::hgx_node(test::kSimGpuBytes, n), test::pcie_node(test::kSimGpuBytes, n)}) {
      SimNvml nvml(fixture);
      for (std::size_t g = 0; g < fixture.gpus.size(); ++g, ++gpus) {
        const std::string& uuid = fixture.gpus[g].uuid;
        EXPECT_TRUE(std::regex_match(uuid, form)) << uuid;
        prefixes.insert(uuid.substr(0, 12));
        const auto said = nvml.uuid(nvml.index_of(static_cast<int>(g)));
        ASSERT_TRUE(said) << said.why();
        EXPECT_EQ(*said, uuid) << fixture.model << " GPU " << g;
      }
    }
  EXPECT_EQ(prefixes.size(), gpus) << "two simulated GPUs share the first 8 digits of their UUIDs";
  EXPECT_FALSE(SimNvml(test::hgx_node()).uuid(8)) << "NVML has no GPU 8 on an 8-GPU node";
}

// CUDA reads CUDA_VISIBLE_DEVICES up to the first entry that names no GPU
// and ignores the rest: another host's UUID after two good entries leaves
// those two visible, in the double and in topo alike (local ranks 0..3 take
// GPUs 6, 2, 6, 2; read on, topo would give local rank 2 GPU 3).
TEST(SimNvml, AnUnknownUuidEndsTheVisibleListInTheDoubleAndInTopo) {
  const Comm node = split_nodes(Comm::world());  // collective: before any assertion may return
  const test::SimNode fixture = test::hgx_node();
  const std::string list = as_uuids(fixture, {6}) + "," + as_uuids(fixture, {2}, 8) + "," + stranger_uuid(0) + ",3";
  const std::vector<int> expected{6, 2};
  EXPECT_EQ(test::cuda_visible(fixture, list), expected) << list;
  SimDevices sim(fixture, test::cuda_visible(fixture, list));
  ASSERT_EQ(sim.count(), 2) << list;
  EXPECT_EQ(sim.uuid(1), fixture.gpus[2].uuid);
  SimNvml nvml(fixture);
  const topo::Inventory inv = inventory_of(nvml, node, {});  // its GPUs, with NVML's UUIDs
  for (int local = 0; local < 4; ++local) {
    const auto picked = topo::pick_rank_gpu(inv.gpus, local, topo::CudaView{list, std::nullopt, -1});
    ASSERT_TRUE(picked) << "local rank " << local << ": " << picked.why();
    const auto uuid = nvml.uuid(static_cast<unsigned>(*picked));
    EXPECT_EQ(uuid ? *uuid : uuid.why(), fixture.gpus[static_cast<std::size_t>(expected[local % 2])].uuid)
        << "local rank " << local << " with CUDA_VISIBLE_DEVICES=" << list;
  }
}

// A UUID prefix two GPUs share names neither: CUDA ends the visible list
// there, as at an entry that names no GPU, and so do the double and topo
// (every local rank takes GPU 6; topo took the first GPU the prefix matched,
// giving local rank 1 GPU 2).
TEST(SimNvml, AnAmbiguousUuidPrefixEndsTheVisibleListInTheDoubleAndInTopo) {
  const Comm node = split_nodes(Comm::world());  // collective: before any assertion may return
  test::SimNode fixture = test::hgx_node();
  fixture.gpus[2].uuid = "GPU-8c1c4e0b-1111-2222-3333-444455556666";
  fixture.gpus[5].uuid = "GPU-8c1c4e0b-7777-2222-3333-444455556666";
  const std::string list = as_uuids(fixture, {6}) + ",GPU-8c1c4e0b,2";
  const std::vector<int> expected{6};
  EXPECT_EQ(test::cuda_visible(fixture, list), expected) << list;
  SimNvml nvml(fixture);
  const topo::Inventory inv = inventory_of(nvml, node, {});
  for (int local = 0; local < 4; ++local) {
    const auto picked = topo::pick_rank_gpu(inv.gpus, local, topo::CudaView{list, std::nullopt, -1});
    ASSERT_TRUE(picked) << "local rank " << local << ": " << picked.why();
    const auto uuid = nvml.uuid(static_cast<unsigned>(*picked));
    EXPECT_EQ(uuid ? *uuid : uuid.why(), fixture.gpus[6].uuid)
        << "local rank " << local << " with CUDA_VISIBLE_DEVICES=" << list;
  }
}

// The NVLink links topo reads for the rank's GPU, and the GPUs the double
// copies to over NVLink from it (peer access on an NVLink node), both as
// "GPU<NVML index>" lists.
std::pair<std::string, std::string> nvlink_views(const test::SimNode& fixture, const Comm& node) {
  std::vector<int> all(fixture.gpus.size());
  std::iota(all.begin(), all.end(), 0);
  const VisibleDevices env(all);
  SimDevices sim(fixture, all);
  const int mine = node.rank() % sim.count();
  EXPECT_EQ(sim.make_current(mine), "");
  SimNvml nvml(fixture);
  const topo::Inventory inv = inventory_of(nvml, node, {});
  std::vector<std::string> read, reached;
  if (inv.rank_gpu)
    for (const auto& p : inv.gpus.at(static_cast<std::size_t>(*inv.rank_gpu)).nvlink.peers)
      read.push_back(fmt::format("{} x{}", p.peer, p.links));
  for (int d = 0; d < sim.count(); ++d)
    if (fixture.nvlink && sim.can_access_peer(mine, d))
      reached.push_back(fmt::format("GPU{} x1", nvml.index_of(sim.physical(d))));
  return {fmt::format("{}", fmt::join(read, ", ")), fmt::format("{}", fmt::join(reached, ", "))};
}

// NVML's NVLink state per link comes from the fixture's topology: every other
// GPU over one link on an HGX node, no link on a PCIe node (P2P over PCIe).
TEST(SimNvml, NvLinkPeersAreTheGpusTheDoubleReachesOverNvLink) {
  const Comm node = split_nodes(Comm::world());
  for (const test::SimNode& fixture : {test::hgx_node(), test::pcie_node()}) {
    const auto [read, reached] = nvlink_views(fixture, node);
    const auto all_read = Comm::world().allgather_strings(read);
    const auto all_reached = Comm::world().allgather_strings(reached);
    if (Comm::world().rank() != 0) continue;
    for (std::size_t r = 0; r < all_read.size(); ++r)
      EXPECT_EQ(all_read[r], all_reached[r]) << fixture.model << ", rank " << r;
    EXPECT_EQ(all_read[0].empty(), !fixture.nvlink) << fixture.model << ": " << all_read[0];
  }
}

// topo's GPU counters over NVML: a CRC error raised on the GPU a rank was
// placed on moves that counter on that rank's bus id, and nothing else.
TEST(SimNvml, ACrcErrorOnARanksGpuIsAMoveOnThatRanksBusId) {
  const Comm node = split_nodes(Comm::world());
  SimDevices sim(test::hgx_node(), neighbour_first(node.rank()));
  run_all_reduce(sim);
  SimNvml nvml(test::hgx_node());
  const topo::CounterPlan plan = topo::plan_gpu_counters(nvml);
  const auto before = topo::read_gpu_counters(nvml, plan);
  nvml.raise(sim.physical(sim.current()), topo::GpuCounter::nvlink_crc_flit_errors, 3);
  const auto moves = topo::counter_moves(before, topo::read_gpu_counters(nvml, plan));
  std::string seen;
  for (const auto& m : moves)
    seen += fmt::format("{} {} {}; ", m.device, m.counter, m.delta ? std::to_string(*m.delta) : m.unknown_reason);
  const auto all_seen = Comm::world().allgather_strings(seen);
  const auto placed = Comm::world().allgather_strings(placed_bus(sim));
  if (Comm::world().rank() != 0) return;
  EXPECT_EQ(plan.readings.size(), 8u * 8u) << "8 GPUs, each with the 8 GPU counters";
  for (std::size_t r = 0; r < placed.size(); ++r)
    EXPECT_EQ(all_seen[r], placed[r] + " nvlink_crc_errors 3; ") << "rank " << r;
}

// What topo's sharing check says about the rank's GPU, as one line for rank 0.
std::string sharing_of(const topo::Inventory& inv) {
  if (!inv.rank_gpu) return "no rank GPU: " + inv.rank_gpu.why();
  const auto& g = inv.gpus.at(static_cast<std::size_t>(*inv.rank_gpu));
  if (!g.sharing.users) return "users unknown: " + g.sharing.users.why();
  std::vector<std::string> users;
  for (const auto& u : *g.sharing.users) users.push_back(fmt::format("{}{}", u.pid, u.ours ? " ours" : ""));
  return fmt::format("[{}] flags [{}]", fmt::join(users, ", "), fmt::join(topo::sharing_flags(g.sharing), "; "));
}

// Each rank on its own GPU: NVML lists only that rank on it, and the
// sharing check flags nothing.
TEST(SimNvml, EachRanksOwnGpuListsOnlyThatRank) {
  const Comm node = split_nodes(Comm::world());
  const VisibleDevices env(own_gpu(node.rank()));
  SimDevices sim(test::hgx_node(), own_gpu(node.rank()));
  run_all_reduce(sim);
  SimNvml nvml(test::hgx_node());
  test::node_holders(nvml, sim, node);
  const auto said = Comm::world().allgather_strings(sharing_of(inventory_of(nvml, node, node_pids(node))));
  const auto pids = Comm::world().allgather_quiet(getpid());
  if (Comm::world().rank() != 0) return;
  for (std::size_t r = 0; r < said.size(); ++r)
    EXPECT_EQ(said[r], fmt::format("[{} ours] flags []", pids[r])) << "rank " << r;
}

// Two ranks given one GPU: the double lets both open it, as CUDA does, and
// placement refuses the second by bus id before NCCL would ("Duplicate GPU
// detected"). NVML must list both on the GPU the refusal names; the check
// names the other rank's process once it is not the job's (another job's
// rank, say), and not while it is.
TEST(SimNvml, TwoRanksOnOneGpuAreRefusedOnTheGpuNvmlListsBothOn) {
  const Comm world = Comm::world();
  const Comm node = split_nodes(world);
  if (node.size() % 2) GTEST_SKIP() << "ranks pair up on a GPU: an even number per node";
  const std::vector<int> visible{node.rank() / 2};  // local ranks 2k and 2k+1 see GPU k only
  const VisibleDevices env(visible);
  SimDevices sim(test::hgx_node(), visible);
  GpuPlacement placement;
  const Support placed = gpu::place_on_gpu(world, -1, placement, sim);
  SimNvml nvml(test::hgx_node());
  test::node_holders(nvml, sim, node);
  const std::vector<long> pids = node_pids(node);
  const std::string as_job = sharing_of(inventory_of(nvml, node, pids));
  const std::string alone = sharing_of(inventory_of(nvml, node, {static_cast<long>(getpid())}));
  const long partner = pids[static_cast<std::size_t>(node.rank() ^ 1)];
  const long me = getpid();
  const std::string first = fmt::format("{}", node.rank() % 2 ? partner : me);
  const std::string second = fmt::format("{}", node.rank() % 2 ? me : partner);
  const auto ok = world.allgather_strings(placed.ok ? "placed" : placed.why);
  const auto job = world.allgather_strings(as_job + " | expected [" + first + " ours, " + second + " ours] flags []");
  const auto other = world.allgather_strings(alone + " | other " + std::to_string(partner));
  const auto bus = world.allgather_strings(placement.pci_bus_id + " " + rank_gpu_bus(inventory_of(nvml, node, pids)));
  if (world.rank() != 0) return;
  for (std::size_t r = 0; r < ok.size(); ++r) {
    const auto local = static_cast<int>(r) % node.size();  // nodes are blocks of ranks (FABRICBENCH_RANKS_PER_NODE)
    const std::string cuda_bus = bus[r].substr(0, bus[r].find(' '));
    EXPECT_EQ(bus[r].substr(bus[r].find(' ') + 1), *topo::sysfs_bus_id(cuda_bus)) << "rank " << r;
    if (local % 2 == 0) {
      EXPECT_EQ(ok[r], "placed") << "rank " << r;
    } else {
      EXPECT_NE(ok[r].find(fmt::format("ranks {} and {} are both on CUDA device 0 ({})", r - 1, r, cuda_bus)),
                std::string::npos)
          << "rank " << r << ": " << ok[r];
    }
    const auto cut = job[r].find(" | expected ");
    EXPECT_EQ(job[r].substr(0, cut), job[r].substr(cut + 12)) << "rank " << r;
    const auto other_pid = other[r].substr(other[r].find(" | other ") + 9);
    EXPECT_NE(other[r].find("in use by 1 other process: pid " + other_pid), std::string::npos)
        << "rank " << r << ": " << other[r];
  }
}

}  // namespace
}  // namespace fb::simnvml_test
