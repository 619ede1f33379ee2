// The nccl backend's own code, multi-rank, through the host doubles of the
// device layer and of NCCL (tests/support/sim_devices.hpp, sim_nccl.hpp):
// every op checked in and out of place over every datatype (the narrow
// floats through host twins of the GPU's rounding) and each reduction, graph batches, the path label derived from the
// log lines the double writes as NCCL does, and hangs in initialisation or a split ended by an abort. Run under mpirun
// with 4 ranks: one node, or two (FABRICBENCH_RANKS_PER_NODE=2); the scopes and hangs also with 16 ranks on two 8-GPU
// nodes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "capture_sink.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/pairs.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sinks.hpp"
#include "nccl/nccl_backend.hpp"
#include "process.hpp"
#include "sim_devices.hpp"
#include "sim_nccl.hpp"

namespace fb {
namespace {

using test::SimDevices;
using test::SimNccl;

int my_rank() { return Comm::world().rank(); }

// The simulated node of a rank, as the engine's node map forms them.
int ranks_per_node() {
  const char* forced = std::getenv("FABRICBENCH_RANKS_PER_NODE");
  return forced ? std::atoi(forced) : Comm::world().size();
}
bool two_nodes() { return ranks_per_node() * 2 == Comm::world().size(); }

RunOptions collectives(std::vector<Op> ops, Dtype dtype = Dtype::float32, RedOp redop = RedOp::sum) {
  RunOptions o;
  o.backend = "nccl";
  o.ops = std::move(ops);
  o.dtype = dtype;
  o.redop = redop;
  o.grid = {1024, 16 << 10, 4.0, 0};
  o.iters = 3;
  o.warmup = 1;
  o.check = true;
  return o;
}

struct NcclRun {
  std::vector<Measurement> rows;  // rank 0's
  std::vector<Skip> skips;
};

NcclRun run_nccl(SimDevices& devices, SimNccl& lib, const RunOptions& o, ProgressBoard* board = nullptr) {
  const Comm world = Comm::world();
  auto backend = make_nccl_backend(devices, lib);
  test::CaptureSink sink;
  Runner runner(world, map_nodes(world), *backend, o, &sink);
  if (board) runner.watch(board);
  runner.preflight();
  runner.run();
  return {sink.rows, sink.skips};
}

std::string skips_of(const NcclRun& r) {
  std::string out;
  for (const auto& s : r.skips) out += fmt::format("{} {} {}: {}\n", s.op, s.scope, s.bytes, s.reason);
  return out;
}

const std::vector<Op> kEveryCollective = {Op::all_reduce, Op::all_gather, Op::reduce_scatter, Op::broadcast, Op::reduce,
                                          Op::gather,     Op::scatter,    Op::alltoall,       Op::sendrecv};

struct Matrix {
  Dtype dtype;
  RedOp redop;
};

class EveryOp : public ::testing::TestWithParam<Matrix> {};

// Every collective, out of place and in place, verified element by element
// on every rank; the reductions over the parameter's datatype and operator.
TEST_P(EveryOp, IsVerifiedInAndOutOfPlace) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node());
  const NcclRun r = run_nccl(devices, lib, collectives(kEveryCollective, GetParam().dtype, GetParam().redop));
  if (my_rank() != 0) return;
  // 3 sizes, both placements; alltoall and sendrecv have no in-place form on NCCL.
  EXPECT_EQ(r.rows.size(), 3u * (2 * kEveryCollective.size() - 2)) << skips_of(r);
  for (const Measurement& m : r.rows) {
    EXPECT_EQ(m.wrong, 0) << m.op << (m.in_place ? " in place " : " ") << m.bytes;
    EXPECT_GT(m.time.median_us, 0) << m.op;
  }
}

INSTANTIATE_TEST_SUITE_P(SimNccl, EveryOp,
                         ::testing::Values(Matrix{Dtype::float32, RedOp::sum}, Matrix{Dtype::float32, RedOp::avg},
                                           Matrix{Dtype::bfloat16, RedOp::sum}, Matrix{Dtype::bfloat16, RedOp::avg},
                                           Matrix{Dtype::fp8_e4m3, RedOp::sum}, Matrix{Dtype::fp8_e4m3, RedOp::avg},
                                           Matrix{Dtype::int8, RedOp::sum}, Matrix{Dtype::int8, RedOp::avg},
                                           Matrix{Dtype::half, RedOp::max}, Matrix{Dtype::fp8_e5m2, RedOp::min},
                                           Matrix{Dtype::float64, RedOp::max}, Matrix{Dtype::int32, RedOp::prod}),
                         [](const ::testing::TestParamInfo<Matrix>& info) {
                           return fmt::format("{}_{}", name(info.param.dtype), name(info.param.redop));
                         });

// NCCL before 2.28 has no ncclGather/ncclScatter: the backend groups sends
// and receives instead, and the results are the same.
TEST(SimNccl, GatherAndScatterFromGroupedSendsAndReceives) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node(), {}, /*has_gather=*/false);
  const NcclRun r = run_nccl(devices, lib, collectives({Op::gather, Op::scatter}));
  if (my_rank() != 0) return;
  EXPECT_EQ(r.rows.size(), 12u) << skips_of(r);
  for (const Measurement& m : r.rows) EXPECT_EQ(m.wrong, 0) << m.op << " " << m.bytes;
}

// Point-to-point rows: pingpong, unidir and bidir between the pair asked for.
TEST(SimNccl, PointToPointBetweenThePairAskedFor) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node());
  RunOptions o = collectives({Op::pingpong, Op::unidir, Op::bidir});
  o.peer_a = 1;
  o.peer_b = 3;
  o.window = 4;
  o.in_place = false;
  const NcclRun r = run_nccl(devices, lib, o);
  if (my_rank() != 0) return;
  EXPECT_EQ(r.rows.size(), 9u) << skips_of(r);
  for (const Measurement& m : r.rows) {
    EXPECT_EQ(m.wrong, 0) << m.op << " " << m.bytes;
    EXPECT_EQ(m.peer_a, 1);
    EXPECT_EQ(m.peer_b, 3);
  }
}

// Issue 34, defect 1, end to end: with --graph each batch is captured once
// and replayed once, so an in-place all_reduce's check sees one reduction.
TEST(SimNccl, GraphBatchesReduceInPlaceDataOnce) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node());
  RunOptions o = collectives({Op::all_reduce, Op::reduce_scatter, Op::all_gather});
  o.graph = true;
  o.out_of_place = false;
  const NcclRun r = run_nccl(devices, lib, o);
  if (my_rank() != 0) return;
  EXPECT_EQ(r.rows.size(), 9u) << skips_of(r);
  for (const Measurement& m : r.rows) EXPECT_EQ(m.wrong, 0) << m.op << " " << m.bytes;
}

// The path label is derived from the log lines NCCL (here the double) wrote
// for the row's communicator: P2P inside a node, the socket network between.
TEST(SimNccl, RowsAreLabelledWithTheTransportTheirCommunicatorUsed) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node());
  RunOptions o = collectives({Op::all_reduce});
  o.grid = {4096, 4096, 2.0, 0};
  o.in_place = false;
  o.scopes =
      two_nodes() ? std::vector<Scope>{Scope::intra, Scope::inter, Scope::rail} : std::vector<Scope>{Scope::global};
  const NcclRun r = run_nccl(devices, lib, o);
  if (my_rank() != 0) return;
  ASSERT_EQ(r.rows.size(), o.scopes.size()) << skips_of(r);
  for (const Measurement& m : r.rows) {
    EXPECT_EQ(m.wrong, 0);
    const bool network = m.scope == "inter" || m.scope == "rail";
    EXPECT_NE(m.path.find(network ? "NET/Socket" : "P2P"), std::string::npos) << m.scope << ": " << m.path;
    EXPECT_NE(m.path.find("2.28.3+simulated"), std::string::npos) << m.path;
  }
}

// Two nodes whose GPUs are in one NVLink domain (an NVL72 rack's trays):
// NCCL joins them over NVLink, so there is no network between domains for
// inter to measure and it is skipped saying so, while the domain scope runs
// the four ranks as one group. The same nodes without domain keys measure
// inter between the two nodes.
TEST(SimNccl, InterBetweenTraysOfOneNvlinkDomainIsSkippedAsNcclJoinsThemOverNvlink) {
  if (!two_nodes()) GTEST_SKIP() << "needs two nodes (FABRICBENCH_RANKS_PER_NODE)";
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node());
  RunOptions o = collectives({Op::all_reduce});
  o.grid = {4096, 4096, 2.0, 0};
  o.in_place = false;
  o.scopes = {Scope::inter, Scope::domain};
  const Comm world = Comm::world();
  auto backend = make_nccl_backend(devices, lib);
  test::CaptureSink sink;
  Runner runner(world, map_nodes(world), *backend, o, &sink);
  runner.nvlink_domains(std::vector<std::string>(static_cast<std::size_t>(world.size()), "rack/0"));
  runner.preflight();
  runner.run();
  if (my_rank() != 0) return;
  ASSERT_EQ(sink.rows.size(), 1u) << skips_of({sink.rows, sink.skips});
  EXPECT_EQ(sink.rows[0].scope, "domain");
  EXPECT_EQ(sink.rows[0].nranks, world.size());
  EXPECT_EQ(sink.rows[0].wrong, 0);
  ASSERT_EQ(sink.skips.size(), 1u);
  EXPECT_EQ(sink.skips[0].scope, "inter");
  EXPECT_NE(sink.skips[0].reason.find("every node of the job is in NVLink domain rack/0"), std::string::npos)
      << sink.skips[0].reason;
}

// `pairs --rails` on NCCL: every pair of nodes, rail by rail (local rank i of
// each node), measured over the network and labelled with its transport.
TEST(SimNccl, PairsMeasureEveryRailBetweenTheNodes) {
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  if (nodes.nodes < 2) GTEST_SKIP() << "one node: pairs needs two (FABRICBENCH_RANKS_PER_NODE)";
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node());
  auto backend = make_nccl_backend(devices, lib);
  PairsOptions o;
  o.bytes = 64 << 10;
  o.window = 2;
  o.timing = {2, 1, 0};
  o.rails = true;
  PairsRunner runner(world, nodes, *backend, o);
  runner.preflight();
  const PairsResult result = runner.run(nullptr);
  EXPECT_EQ(runner.rails(), nodes.local_size);
  // Two nodes: one pair per rail.
  ASSERT_EQ(result.measured.size(), static_cast<std::size_t>(nodes.local_size));
  for (const PairMeasurement& m : result.measured) {
    EXPECT_GT(m.figures.unidir_ab_gbps, 0) << m.job.rail;
    EXPECT_GT(m.figures.bidir_gbps, 0) << m.job.rail;
    EXPECT_NE(m.path.find("NET/Socket"), std::string::npos) << m.job.rail << ": " << m.path;
  }
}

// A record made through the doubles says so in its header, and what judges
// or prices a network (check, model) refuses it as a measurement.
TEST(SimNccl, ARecordMadeThroughTheDoublesIsRefusedAsAMeasurement) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node());
  auto backend = make_nccl_backend(devices, lib);
  ASSERT_TRUE(backend->simulated());
  const Comm world = Comm::world();
  const std::string path = world.bcast_string_quiet(test::make_temp_dir("fb_sim_record_"), 0) + "/simulated.jsonl";
  {
    std::unique_ptr<RowSink> sink = my_rank() == 0 ? make_record_sink(path, false) : nullptr;
    if (sink) sink->begin(test::simulated_run_header(*backend, world.size()));
    Runner runner(world, map_nodes(world), *backend, collectives({Op::all_reduce}), sink.get());
    runner.preflight();
    runner.run();
    if (sink) sink->end(Summary{});
  }
  world.barrier();
  if (my_rank() != 0) return;
  EXPECT_TRUE(read_results(path).header.simulated);
  const std::string profiles = std::string(FB_SOURCE_DIR) + "/profiles/";
  const auto check = [&](const std::string& profile) {
    return "check --progress off --out-dir " + path + "." + profile + ".check --profile " + profiles + profile +
           " --results " + path;
  };
  // check judges the record under the smoke profile and under a GPU cluster's
  // acceptance profile (issue 34: "check and model refuse it as a measurement").
  for (const std::string& args : {check("local-smoke.yaml"), check("h100-8x-ndr400.yaml"), "model fit " + path}) {
    // A command of its own, not a rank of this job: without the launcher's environment.
    const auto r = test::run_process(
        "timeout 60 env -i PATH=\"$PATH\" LD_LIBRARY_PATH=\"$LD_LIBRARY_PATH\" "
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
        std::string(FB_BINARY) + " " + args + " </dev/null");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find("figures are simulated, not measured"), std::string::npos) << args << ": " << r.err;
  }
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// Plays the hang watchdog's thread: until stopped, asks the board to abort
// whatever the engine is opening or driving (ProgressBoard::abort_active_group).
class AbortingWatchdog {
 public:
  // Aborts only once this rank's NCCL call hangs (lib.hanging()): an abort raised sooner, on a loaded machine
  // before the rank reached the hang, ended the world's initialisation instead, and the other ranks then waited
  // in the split's MPI_Comm_split for a rank that had left (the job hung in 8 of 25 runs beside two busy loops).
  AbortingWatchdog(ProgressBoard& board, const SimNccl& lib)
      : thread_([this, &board, &lib] {
          while (!stop_.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (lib.hanging()) board.abort_active_group();
          }
        }) {}
  ~AbortingWatchdog() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Issue 34, defect 11: a hang inside NCCL's initialisation or a split ends
// in ncclCommAbort on the engine's thread (the communicator torn down, the
// error named), not only in the watchdog's _exit.
void expect_hang_aborted(test::SimNcclFaults faults, const char* during, int communicators) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node(), faults);
  ProgressBoard board;
  std::string error;
  {
    AbortingWatchdog watchdog(board, lib);
    try {
      run_nccl(devices, lib, collectives({Op::all_reduce}), &board);
    } catch (const RunError& e) {
      error = e.what();
    }
  }
  EXPECT_NE(error.find(during), std::string::npos) << error;
  EXPECT_NE(error.find("NCCL communicator aborted"), std::string::npos) << error;
  // Every communicator the library handed over is torn down by ncclCommAbort: the child of a split whose wait
  // was aborted too, though its constructor threw and so ran no destructor.
  EXPECT_EQ(lib.communicators_made, communicators);
  EXPECT_EQ(lib.communicators_aborted, communicators);
  EXPECT_EQ(lib.communicators_destroyed, 0);
}

// The world communicator.
TEST(SimNccl, AHangInInitialisationIsAborted) {
  expect_hang_aborted({.hang_in_init = true}, "ncclCommInitRankConfig", 1);
}

// The world communicator and the split's child, already handed over when the split's wait hung.
TEST(SimNccl, AHangInASplitIsAborted) { expect_hang_aborted({.hang_in_split = true}, "ncclCommSplit", 2); }

// An end while the backend opens waits for NCCL's abort only once there is a
// communicator to abort: before it, while rank 0's unique id is broadcast over
// MPI, the engine's thread never polls, and the ending waited its 2 s out.
TEST(SimNccl, AnEndBeforeTheWorldCommunicatorExistsDoesNotWaitForAnAbort) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node());
  auto backend = make_nccl_backend(devices, lib);
  const Comm world = Comm::world();
  RunOptions options = collectives({Op::all_reduce});
  ASSERT_TRUE(backend->setup(world, options).ok);
  EXPECT_FALSE(backend->abort_open_ends_wait()) << "set up, no communicator yet";
  { auto group = backend->open(world); }
  EXPECT_TRUE(backend->abort_open_ends_wait()) << "the world communicator exists: its abort ends the wait";
}

// An asynchronous error (a peer lost mid-run) ends the wait on NCCL's work
// with NCCL's reason, not a hang.
TEST(SimNccl, AnAsynchronousErrorEndsTheRunWithItsReason) {
  SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  SimNccl lib(ranks_per_node(), {.async_error_after_ops = 3});
  try {
    run_nccl(devices, lib, collectives({Op::all_reduce}));
    ADD_FAILURE() << "the run ended normally";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("ncclRemoteError (simulated"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fb
