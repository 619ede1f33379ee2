// The engine's own cost per timed iteration and per row, with a backend op
// that does nothing, so the harness is all that is measured. One process:
// MPI starts as a singleton.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/progress.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/stats.hpp"
#include "fabricbench/core/timing.hpp"

namespace {

class NoOp final : public fb::PreparedOp {
 public:
  void run() override { benchmark::ClobberMemory(); }
  void fill_check() override {}
  std::uint64_t count_wrong() override { return 0; }
};

// Per-iteration cost of the timed loop: the virtual call and one clock read.
void BM_TimedIteration(benchmark::State& state) {
  NoOp op;
  std::vector<double> start(1024);
  std::vector<double> duration(1024);
  for (auto _ : state) op.run_timed({start, duration});
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_TimedIteration);

// The same with the watchdog's progress counter stored every iteration.
void BM_TimedIterationWatched(benchmark::State& state) {
  NoOp op;
  fb::ProgressBoard board;
  std::vector<double> start(1024);
  std::vector<double> duration(1024);
  for (auto _ : state) op.run_timed({start, duration, board.issued()});
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_TimedIterationWatched);

// One whole measurement of a no-op: warm-up, batches, reductions, lateness.
void BM_MeasurementOfNoOp(benchmark::State& state) {
  const fb::Comm world = fb::Comm::world();
  NoOp op;
  const fb::TimingPlan plan{static_cast<int>(state.range(0)), 5, 0};
  for (auto _ : state) benchmark::DoNotOptimize(fb::time_op(world, &op, plan));
}
BENCHMARK(BM_MeasurementOfNoOp)->Arg(20)->Arg(1000);

void BM_Summarize(benchmark::State& state) {
  std::vector<double> t(static_cast<std::size_t>(state.range(0)));
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>((i * 7919) % 1000);
  for (auto _ : state) benchmark::DoNotOptimize(fb::summarize(t));
}
BENCHMARK(BM_Summarize)->Arg(20)->Arg(10000);

// A row to a record line on disk (the cost paid once per measurement).
void BM_RecordLine(benchmark::State& state) {
  fb::RecordWriter w;
  if (!w.open("/dev/null", true).empty()) state.SkipWithError("cannot open /dev/null");
  fb::Measurement m;
  m.op = "all_reduce";
  m.time = fb::summarize(std::vector<double>(20, 1.0));
  for (auto _ : state) w.write(m);
}
BENCHMARK(BM_RecordLine);

}  // namespace

int main(int argc, char** argv) {
  fb::MpiSession mpi(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
