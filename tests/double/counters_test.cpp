// Which rows used the device whose error counter moved (issue 36): the nccl
// backend through the doubles on two simulated nodes, with every leader's
// reader reporting a move on one of its NIC's ports and one of its GPUs after
// every row. A GPU row uses the GPUs in every scope; the port only in the
// rows whose ranks span the nodes, never in an intra row.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <variant>

#include "capture_sink.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/row_counters.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/scope.hpp"
#include "nccl/nccl_backend.hpp"
#include "sim_devices.hpp"
#include "sim_nccl.hpp"

namespace fb {
namespace {

// A leader's reader whose port and GPU both count one error per row.
class EveryRowMoves final : public RowCounters {
 public:
  void before() override {}
  std::vector<CounterMove> after() override {
    return {{"mlx5_0:1", "port", "symbol_error", 1, ""}, {"0000:1a:00.0", "gpu", "nvlink_crc_errors", 1, ""}};
  }
  std::size_t size() const override { return 2; }
};

int ranks_per_node_forced() {
  const char* forced = std::getenv("FABRICBENCH_RANKS_PER_NODE");
  return forced ? std::atoi(forced) : 0;
}

TEST(SimCounters, AGpuRowUsesTheGpusAndOnlyARowAcrossNodesUsesThePort) {
  const Comm world = Comm::world();
  if (ranks_per_node_forced() * 2 != world.size()) GTEST_SKIP() << "needs two nodes (FABRICBENCH_RANKS_PER_NODE)";
  test::SimDevices devices(test::hgx_node(), {0, 1, 2, 3, 4, 5, 6, 7});
  test::SimNccl lib(ranks_per_node_forced());
  auto backend = make_nccl_backend(devices, lib);
  RunOptions o;
  o.backend = "nccl";
  o.ops = {Op::all_reduce};
  o.grid = {4096, 4096, 2.0, 0};
  o.iters = 2;
  o.warmup = 1;
  o.in_place = false;
  o.scopes = {Scope::intra, Scope::inter, Scope::global};
  test::CaptureSink sink;
  EveryRowMoves reader;
  Runner runner(world, map_nodes(world), *backend, o, &sink);
  runner.count_errors(&reader);
  runner.preflight();
  runner.run();
  if (world.rank() != 0) return;
  ASSERT_EQ(sink.rows.size(), 3u);
  std::size_t port_lines = 0, gpu_lines = 0;
  std::map<std::string, int> lines_of_scope;
  for (const auto& line : sink.lines) {
    const auto* c = std::get_if<CounterLine>(&line);
    if (!c) continue;
    ++lines_of_scope[c->scope];
    if (c->device_kind == "gpu") {
      ++gpu_lines;
      EXPECT_TRUE(c->exercised) << c->scope << ": the nccl backend's buffers are in GPU memory";
    } else {
      ++port_lines;
      EXPECT_EQ(c->exercised, c->scope != "intra") << c->scope << " row, node " << c->node;
    }
  }
  // Both nodes' leaders, every row: a port and a GPU line each.
  EXPECT_EQ(port_lines, 2 * sink.rows.size());
  EXPECT_EQ(gpu_lines, 2 * sink.rows.size());
  EXPECT_EQ(lines_of_scope, (std::map<std::string, int>{{"global", 4}, {"inter", 4}, {"intra", 4}}));
}

}  // namespace
}  // namespace fb
