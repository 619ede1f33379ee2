// Harness overhead: fabricbench's median all_reduce time against a bare loop
// of the same MPI call timed with MPI_Wtime, in the same run.
//
// On a shared two-core machine the time of one call moves by tens of percent
// with the physical pages under its buffers, so each round allocates one pair
// of buffers and times, on exactly those buffers and alternating order:
//   bare    MPI_Allreduce between two MPI_Wtime calls;
//   engine  the same call driven by fabricbench's Runner (timed loop, stats,
//           stop rule) through a backend that issues only that call, with the
//           hang watchdog running as `fabricbench run` has it by default
//           (progress counter per iteration, its thread, its side channel);
// and, on buffers of its own, the shipped mpi backend ("mpi"), for reference:
// its column moves with where its buffers land (running it first in each
// round instead of last turned 1.5x slower at 4 MiB into 1.5x faster here).
// Reported: the median over rounds of each, and the median of the per-round
// engine/bare ratios (a paired comparison: both ran on the same pages).
//   mpirun -np 2 --bind-to none build/bench/fb_overhead_bench [rounds]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/stats.hpp"
#include "fabricbench/core/watchdog.hpp"
#include "mpi_host/host_memory.hpp"
#include "mpi_host/mpi_host.hpp"

namespace {

constexpr int kWarmup = 5;

int iterations_for(std::uint64_t bytes) { return bytes >= (64u << 20) ? 20 : bytes >= (4u << 20) ? 100 : 2000; }

struct Buffers {
  explicit Buffers(std::uint64_t bytes) : in(bytes), out(bytes), count(static_cast<int>(bytes / sizeof(float))) {}
  fb::HostBuffer in;
  fb::HostBuffer out;
  int count;
};

double bare_median_us(const Buffers& b, int n) {
  for (int i = 0; i < kWarmup; ++i)
    MPI_Allreduce(b.in.data(), b.out.data(), b.count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  std::vector<double> t(static_cast<std::size_t>(n));
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i) {
    const double t0 = MPI_Wtime();
    MPI_Allreduce(b.in.data(), b.out.data(), b.count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    t[static_cast<std::size_t>(i)] = (MPI_Wtime() - t0) * 1e6;
  }
  MPI_Allreduce(MPI_IN_PLACE, t.data(), n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return fb::median_of(t);
}

// The engine's view of the bare call: the same buffers, the same MPI call.
class SameCallBackend final : public fb::Backend {
 public:
  explicit SameCallBackend(const Buffers& b) : b_(b) {}
  std::string_view name() const override { return "same-call"; }
  std::string version() const override { return ""; }
  fb::OpSet ops() const override { return fb::OpSet().add(fb::Op::all_reduce); }  // the one call it makes
  fb::Support supports(const fb::OpSpec&) const override { return fb::Support::yes(); }
  fb::Support fits(std::uint64_t, int) const override { return fb::Support::yes(); }
  std::unique_ptr<fb::BackendGroup> open(const fb::Comm& comm) override {
    struct Op final : fb::PreparedOp {
      const Buffers* b;
      MPI_Comm comm;
      void run() override { MPI_Allreduce(b->in.data(), b->out.data(), b->count, MPI_FLOAT, MPI_SUM, comm); }
      void fill_check() override {}
      std::uint64_t count_wrong() override { return 0; }
    };
    struct Group final : fb::BackendGroup {
      const Buffers* b;
      MPI_Comm comm;
      void reserve(std::uint64_t, std::uint64_t) override {}
      std::string path() const override { return "shm"; }
      std::unique_ptr<fb::PreparedOp> prepare(const fb::OpSpec&) override {
        auto op = std::make_unique<Op>();
        op->b = b;
        op->comm = comm;
        return op;
      }
    };
    auto g = std::make_unique<Group>();
    g->b = &b_;
    g->comm = comm.native();
    return g;
  }

 private:
  const Buffers& b_;
};

class LastRow final : public fb::RowSink {
 public:
  void begin(const fb::RunHeader&) override {}
  void measurement(const fb::Measurement& row) override { median_us = row.time.median_us; }
  void skip(const fb::Skip&) override {}
  void end(const fb::Summary&) override {}
  double median_us = 0;
};

double engine_median_us(fb::Backend& backend, const fb::NodeMap& nodes, std::uint64_t bytes, fb::ProgressBoard& board) {
  fb::RunOptions o;
  o.ops = {fb::Op::all_reduce};
  o.grid = {bytes, bytes, 2.0, 0};
  o.iters = iterations_for(bytes);
  o.warmup = kWarmup;
  o.in_place = false;
  LastRow row;
  fb::Runner runner(fb::Comm::world(), nodes, backend, o, &row);
  runner.watch(&board);
  runner.run();
  double median = row.median_us;
  MPI_Bcast(&median, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return median;
}

}  // namespace

int main(int argc, char** argv) {
  fb::MpiSession mpi(&argc, &argv);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 9;
  const fb::Comm world = fb::Comm::world();
  const fb::NodeMap nodes = fb::map_nodes(world);
  auto mpi_backend = fb::make_mpi_host_backend();
  fb::ProgressBoard board;
  fb::Watchdog watchdog(world, nodes, fb::watch::TimeoutPolicy{}, board, nullptr);
  const bool root = world.rank() == 0;
  if (root)
    std::printf("# all_reduce float sum, %d ranks, medians over %d rounds\n# %10s %10s %10s %10s %13s %10s\n",
                world.size(), rounds, "bytes", "bare_us", "engine_us", "mpi_us", "engine/bare", "mpi/bare");
  double worst = 0;
  std::vector<std::uint64_t> sizes{8ull, 64ull << 10, 4ull << 20, 64ull << 20};
  if (const char* only = std::getenv("FB_OVERHEAD_BYTES")) sizes = {std::strtoull(only, nullptr, 10)};
  for (std::uint64_t bytes : sizes) {
    std::vector<double> bare, engine, shipped;
    for (int r = 0; r < rounds; ++r) {
      const Buffers b(bytes);
      SameCallBackend same(b);
      if (r % 2 == 0) {
        bare.push_back(bare_median_us(b, iterations_for(bytes)));
        engine.push_back(engine_median_us(same, nodes, bytes, board));
      } else {
        engine.push_back(engine_median_us(same, nodes, bytes, board));
        bare.push_back(bare_median_us(b, iterations_for(bytes)));
      }
      shipped.push_back(engine_median_us(*mpi_backend, nodes, bytes, board));
    }
    if (root && std::getenv("FB_OVERHEAD_ROUNDS"))
      for (int r = 0; r < rounds; ++r) std::printf("    round %d: bare %.3f engine %.3f mpi %.3f\n", r, bare[r], engine[r], shipped[r]);
    std::vector<double> paired;
    for (int r = 0; r < rounds; ++r) paired.push_back(engine[r] / bare[r]);
    const double bm = fb::median_of(bare);
    const double ratio = fb::median_of(paired);
    worst = std::max(worst, std::abs(ratio - 1.0));
    if (root)
      std::printf("  %10llu %10.3f %10.3f %10.3f %13.4f %10.4f\n", static_cast<unsigned long long>(bytes), bm,
                  fb::median_of(engine), fb::median_of(shipped), ratio, fb::median_of(shipped) / bm);
  }
  if (root) std::printf("# largest engine/bare difference (median of paired rounds): %.2f%% (goal: within 3%%)\n", worst * 100);
  watchdog.finish();
  return 0;
}
