// The engine on the host-MPI backend with every rank of the job: every op's
// output checked on every rank, rows as expected, scopes split as expected.
// Run with 2 and 4 ranks (and FABRICBENCH_RANKS_PER_NODE=2 for two "nodes").
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/scope.hpp"
#include "capture_sink.hpp"
#include "hooked_backend.hpp"
#include "mpi_host/mpi_host.hpp"

namespace fb {
namespace {

using test::CaptureSink;

struct EngineRun {
  RunTotals totals;
  CaptureSink sink;
};

EngineRun run_engine(RunOptions options) {
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  auto backend = make_mpi_host_backend();
  EngineRun r;
  Runner runner(world, nodes, *backend, options, &r.sink);
  r.totals = runner.run();
  return r;
}

bool root_rank() { return Comm::world().rank() == 0; }

TEST(Engine, EveryOpIsCorrectOnEveryRank) {
  RunOptions o;
  o.ops.assign(all_ops().begin(), all_ops().end());
  o.grid = {8, 256 << 10, 8.0, 0};
  o.iters = 3;
  o.warmup = 1;
  o.check = true;
  o.window = 4;
  const EngineRun r = run_engine(o);
  EXPECT_EQ(r.totals.wrong, 0);  // every rank learns the total
  if (!root_rank()) return;
  ASSERT_FALSE(r.sink.rows.empty());
  std::set<std::string> ops;
  for (const auto& m : r.sink.rows) {
    EXPECT_EQ(m.wrong, 0) << m.op << " " << m.bytes << (m.in_place ? " in-place" : "");
    EXPECT_EQ(m.time.iterations, 3u);
    EXPECT_GT(m.time.median_us, 0.0) << m.op;
    EXPECT_GE(m.slowest_rank, 0);
    ops.insert(m.op);
  }
  EXPECT_EQ(ops.size(), all_ops().size());
}

TEST(Engine, OneRowPerOpSizeAndPlacement) {
  RunOptions o;
  o.grid = {1024, 64 << 10, 4.0, 0};  // 1K 4K 16K 64K
  o.iters = 2;
  o.warmup = 0;
  const EngineRun r = run_engine(o);
  if (!root_rank()) return;
  std::map<std::tuple<std::string, std::uint64_t, bool>, int> seen;
  for (const auto& m : r.sink.rows) ++seen[std::make_tuple(m.op, m.bytes, m.in_place)];
  for (const auto& [key, n] : seen) EXPECT_EQ(n, 1);
  // Six collectives x 4 sizes x 2 placements, less broadcast out-of-place (MPI_Bcast has one buffer).
  EXPECT_EQ(r.sink.rows.size(), 6u * 4 * 2 - 4);
  EXPECT_EQ(r.sink.skips.size(), 1u);
}

TEST(Engine, CheckCountsPlantedCorruption) {
  // A backend that lies about one element on rank 1 must be caught.
  test::HookedBackend corrupting(make_mpi_host_backend(), {.after = [](PreparedOp& op) {
                                   if (Comm::world().rank() == 1) op.corrupt_output_element(3);
                                 }});
  RunOptions o;
  o.ops = {Op::all_reduce, Op::all_gather};
  o.grid = {4096, 4096, 2.0, 0};
  o.iters = 2;
  o.warmup = 0;
  o.check = true;
  o.in_place = false;
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  CaptureSink sink;
  Runner runner(world, nodes, corrupting, o, &sink);
  const RunTotals t = runner.run();
  EXPECT_EQ(t.wrong, 2);
  if (!root_rank()) return;
  ASSERT_EQ(sink.rows.size(), 2u);
  for (const auto& m : sink.rows) {
    EXPECT_EQ(m.wrong, 1) << m.op;
    EXPECT_EQ(m.wrong_ranks, std::vector<int>{1});
  }
}

// The host backend with one op struck from its declared list, recording every
// op the engine asks supports() about and every op it prepares.
class Undeclaring final : public ForwardingBackend {
 public:
  explicit Undeclaring(Op struck) : ForwardingBackend(make_mpi_host_backend()), struck_(struck) {}
  OpSet ops() const override {
    const OpSet inner = ForwardingBackend::ops();
    return OpSet::where([&](Op op) { return op != struck_ && inner.has(op); });
  }
  Support supports(const OpSpec& spec) const override {
    asked.insert(spec.op);
    return ForwardingBackend::supports(spec);
  }
  std::unique_ptr<BackendGroup> open(const Comm& comm) override {
    struct Recording final : ForwardingGroup {
      Recording(std::unique_ptr<BackendGroup> g, std::set<Op>& seen) : ForwardingGroup(std::move(g)), seen_(seen) {}
      std::unique_ptr<PreparedOp> prepare(const OpSpec& spec) override {
        seen_.insert(spec.op);
        return ForwardingGroup::prepare(spec);
      }
      std::set<Op>& seen_;
    };
    return std::make_unique<Recording>(ForwardingBackend::open(comm), prepared);
  }
  mutable std::set<Op> asked;
  std::set<Op> prepared;

 private:
  Op struck_;
};

TEST(Engine, AnOpTheBackendDoesNotDeclareIsRefusedWithAReasonAndNeverTimed) {
  // The mpi backend has code for all_gather: only the declaration keeps it
  // out, so a row for it here would mean the engine ran an undeclared op.
  Undeclaring backend(Op::all_gather);
  RunOptions o;
  o.ops = {Op::all_gather, Op::all_reduce};
  o.grid = {1024, 4096, 4.0, 0};
  o.iters = 2;
  o.warmup = 0;
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  CaptureSink sink;
  Runner runner(world, nodes, backend, o, &sink);
  runner.preflight();  // all_reduce is left to measure
  runner.run();
  EXPECT_EQ(backend.asked.count(Op::all_gather), 0u);  // supports() never saw it
  EXPECT_EQ(backend.prepared.count(Op::all_gather), 0u);
  EXPECT_EQ(backend.prepared.count(Op::all_reduce), 1u);
  if (!root_rank()) return;
  for (const auto& m : sink.rows) EXPECT_EQ(m.op, "all_reduce");
  EXPECT_EQ(sink.rows.size(), 2u * 2);  // 1K and 4K, out-of-place and in-place
  ASSERT_EQ(sink.skips.size(), 1u);     // one line for the op, not one per size or placement
  EXPECT_EQ(sink.skips[0].op, "all_gather");
  EXPECT_NE(sink.skips[0].reason.find("all_gather is not an op of the mpi backend"), std::string::npos)
      << sink.skips[0].reason;
}

TEST(Engine, APlanOfUndeclaredOpsIsRefusedBeforeAnythingRuns) {
  Undeclaring backend(Op::gather);
  RunOptions o;
  o.ops = {Op::gather};
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  CaptureSink sink;
  Runner runner(world, nodes, backend, o, &sink);
  try {
    runner.preflight();
    ADD_FAILURE() << "preflight accepted a plan the backend cannot run";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("gather is not an op of the mpi backend"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(backend.asked.empty());
}

TEST(Scopes, SplitFollowsTheNodes) {
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  const int n = world.size();
  EXPECT_EQ(nodes.nodes * nodes.local_size, n);
  EXPECT_EQ(static_cast<int>(nodes.rank_node.size()), n);

  const ScopeGroup global = make_scope(world, nodes, Scope::global);
  EXPECT_TRUE(global.member());
  EXPECT_EQ(global.group_size, n);

  const ScopeGroup intra = make_scope(world, nodes, Scope::intra);
  const ScopeGroup inter = make_scope(world, nodes, Scope::inter);
  const ScopeGroup rail = make_scope(world, nodes, Scope::rail);
  if (nodes.nodes == 1) {
    EXPECT_TRUE(intra.member());
    EXPECT_EQ(intra.comm.size(), n);
    EXPECT_FALSE(inter.skip.empty());
    EXPECT_FALSE(inter.member());
    EXPECT_FALSE(rail.skip.empty());
  } else {
    // intra: the ranks of my node, all at once
    EXPECT_EQ(intra.comm.size(), nodes.local_size);
    EXPECT_EQ(intra.groups, nodes.nodes);
    // inter: one rank per node, local rank 0
    EXPECT_EQ(inter.member(), nodes.local_rank == 0);
    if (inter.member()) {
      EXPECT_EQ(inter.comm.size(), nodes.nodes);
    }
    // rail: my local rank on every node
    if (nodes.local_size > 1) {
      ASSERT_TRUE(rail.member());
      EXPECT_EQ(rail.comm.size(), nodes.nodes);
      EXPECT_EQ(rail.groups, nodes.local_size);
      EXPECT_EQ(rail.comm.rank(), nodes.node);
    }
  }
}

TEST(Scopes, EveryScopeRunsAndLabelsItsRows) {
  RunOptions o;
  o.ops = {Op::all_reduce, Op::sendrecv};
  o.scopes.assign(all_scopes().begin(), all_scopes().end());
  o.grid = {64, 64, 2.0, 0};
  o.iters = 2;
  o.warmup = 0;
  o.check = true;
  const EngineRun r = run_engine(o);
  EXPECT_EQ(r.totals.wrong, 0);
  const NodeMap nodes = map_nodes(Comm::world());  // collective: before rank 0 goes its own way
  if (!root_rank()) return;
  std::map<std::string, int> nranks;
  for (const auto& m : r.sink.rows) nranks[m.scope] = m.nranks;
  EXPECT_EQ(nranks["global"], Comm::world().size());
  if (nodes.nodes > 1) {
    EXPECT_EQ(nranks["inter"], nodes.nodes);
    EXPECT_EQ(nranks["intra"], nodes.local_size);
  } else {
    EXPECT_EQ(nranks.count("inter"), 0u);
  }
}

TEST(Straggler, LateRankIsNamed) {
  // Rank 1 enters every iteration 20 ms late: the others wait for it. (Late
  // enough that a loaded machine descheduling another rank in some
  // iterations does not make that rank the later one on average: with 5 ms,
  // four spinning ranks on two cores once made rank 2 the later one in CI.)
  test::HookedBackend late(make_mpi_host_backend(), {.before = [] {
                             if (Comm::world().rank() != 1) return;
                             const double until = now_us() + 20000;
                             while (now_us() < until) {
                             }
                           }});
  RunOptions o;
  o.ops = {Op::all_reduce};
  o.grid = {1024, 1024, 2.0, 0};
  o.iters = 20;
  o.warmup = 1;
  o.in_place = false;
  const Comm world = Comm::world();
  const NodeMap nodes = map_nodes(world);
  CaptureSink sink;
  Runner runner(world, nodes, late, o, &sink);
  runner.run();
  if (!root_rank()) return;
  ASSERT_EQ(sink.rows.size(), 1u);
  EXPECT_EQ(sink.rows[0].slowest_rank, 1);
  EXPECT_GT(sink.rows[0].slowest_rank_lag_us, 10000.0);
}

}  // namespace
}  // namespace fb
