// The mpi-cuda backend's own code, multi-rank, through the host double of
// the device layer (tests/support/sim_devices.hpp): the MPI library's
// collectives and point-to-point on the simulated GPUs' buffers (host
// memory the double hands out as device memory), each verified through the
// layer's check, and a planted wrong element counted. The MPI library is
// the real one; only the GPUs are simulated.
#include <gtest/gtest.h>

#include <set>
#include <span>
#include <string>
#include <vector>

#include "capture_sink.hpp"
#include "fabricbench/backends/corruptible.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/scope.hpp"
#include "hooked_backend.hpp"
#include "mpi_cuda/mpi_cuda_backend.hpp"
#include "sim_devices.hpp"

namespace fb {
namespace {

// `ops`: those of them the backend runs.
RunOptions mpi_cuda_sweep(const Backend& backend, std::span<const Op> ops) {
  RunOptions o;
  o.backend = "mpi-cuda";
  o.ops.clear();  // not the default sweep's
  for (Op op : ops)
    if (backend.ops().has(op)) o.ops.push_back(op);
  o.grid = {1024, 16 << 10, 4.0, 0};
  o.iters = 2;
  o.warmup = 1;
  o.check = true;
  return o;
}

struct MpiCudaRun {
  std::vector<Measurement> rows;  // rank 0's
  std::vector<Skip> skips;
  RunTotals totals;
};

MpiCudaRun run_mpi_cuda(Backend& backend, const RunOptions& o) {
  const Comm world = Comm::world();
  test::CaptureSink sink;
  Runner runner(world, map_nodes(world), backend, o, &sink);
  runner.preflight();
  const RunTotals t = runner.run();
  return {sink.rows, sink.skips, t};
}

// One simulated GPU per rank (the node's GPUs in order): every op the
// backend offers, in and out of place, is measured and verified on the
// device buffers, and labelled as MPI on device buffers.
TEST(SimMpiCuda, EveryOpIsVerifiedOnDeviceBuffers) {
  const int local = map_nodes(Comm::world()).local_rank;
  ASSERT_LT(local, 8) << "one simulated 8-GPU node takes at most 8 ranks";
  test::SimDevices devices(test::hgx_node(), {local});
  auto backend = make_mpi_cuda_backend(devices);
  ASSERT_TRUE(backend->on_gpus());
  const MpiCudaRun r = run_mpi_cuda(*backend, mpi_cuda_sweep(*backend, all_ops()));
  EXPECT_EQ(r.totals.wrong, 0);
  if (Comm::world().rank() != 0) return;
  std::set<std::string> ops;
  for (const Measurement& m : r.rows) {
    EXPECT_EQ(m.wrong, 0) << m.op << (m.in_place ? " in place " : " ") << m.bytes << " (-1: not checked)";
    EXPECT_NE(m.path.find("(device buffers)"), std::string::npos) << m.path;
    ops.insert(m.op);
  }
  // Every communication op the backend offers has rows (none is skipped on 4 ranks).
  std::set<std::string> offered;
  for (Op op : all_ops())
    if (backend->ops().has(op)) offered.insert(std::string(name(op)));
  EXPECT_EQ(ops, offered) << "skipped: " << r.skips.size();
}

// The check runs on the device through the layer: an element corrupted
// on rank 1's device output after each iteration is found there, once per row.
TEST(SimMpiCuda, AWrongElementOnOneRanksDeviceIsCounted) {
  const int local = map_nodes(Comm::world()).local_rank;
  test::SimDevices devices(test::hgx_node(), {local});
  test::HookedBackend corrupting(make_mpi_cuda_backend(devices), {.after = [](PreparedOp& op) {
                                   if (Comm::world().rank() == 1) corruptible(op)->corrupt_output_element(3);
                                 }});
  const std::vector<Op> two{Op::all_reduce, Op::all_gather};
  RunOptions o = mpi_cuda_sweep(corrupting, two);
  o.grid = {4096, 4096, 2.0, 0};
  o.in_place = false;
  const MpiCudaRun r = run_mpi_cuda(corrupting, o);
  EXPECT_EQ(r.totals.wrong, 2);
  if (Comm::world().rank() != 0) return;
  std::string seen;
  for (const Measurement& m : r.rows) seen += m.op + " " + std::to_string(m.bytes) + (m.in_place ? " in; " : "; ");
  ASSERT_EQ(r.rows.size(), 2u) << seen;
  for (const Measurement& m : r.rows) EXPECT_EQ(m.wrong, 1) << m.op;
}

}  // namespace
}  // namespace fb
