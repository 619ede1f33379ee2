// `fabricbench run`: parse and agree on the options across ranks, open the
// sinks on rank 0, hand the plan to the engine, close the record.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "commands.hpp"
#include "fabricbench/backends/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/sinks.hpp"
#include "fabricbench/core/watchdog.hpp"
#include "fault/fault.hpp"
#include "record_header.hpp"
#include "run_options.hpp"

namespace fb::cli {
namespace {

nlohmann::ordered_json run_header(int argc, char** argv, const Comm& world, const NodeMap& nodes, const Backend& backend,
                                  const RunOptions& options) {
  auto header = record_header("run", argc, argv, world, nodes);
  header["backend"] = backend.name();
  header["backend_version"] = backend.version();
  header["options"] = to_json(options);
  return header;
}

int parse_everywhere(const Comm& world, CLI::App& app, int argc, char** argv, RunFlags& flags, RunOptions& options) {
  return parse_on_every_rank(
      world, app, argc, argv, "run",
      [&] {
        options = resolve(flags);
        return canonical(options);
      },
      [&] { return std::vector<OutputFile>{{flags.out, "--out"}, {flags.csv, "--csv"}}; });
}

SinkList make_sinks(const RunFlags& flags) {
  SinkList sinks;
  if (show_progress(flags.progress) && !flags.quiet) sinks.add(make_progress_sink(stderr));
  if (!flags.quiet) sinks.add(make_table_sink(stdout));
  if (!flags.out.empty()) sinks.add(make_record_sink(flags.out));
  if (!flags.csv.empty()) sinks.add(make_csv_sink(flags.csv));
  return sinks;
}

using Clock = std::chrono::steady_clock;

// Rank 0: what the watchdog's thread needs to close the record of a run it
// ends (hang, lost rank, error, signal) while the engine's thread is stuck.
class RecordCloser {
 public:
  void arm(RowSink* sinks, Clock::time_point started) {
    started_ = started;
    sinks_.store(sinks, std::memory_order_release);
  }
  void operator()(const watch::RunEnd& end) const {
    std::fprintf(stderr, "fabricbench run: %s\n", end.message.c_str());
    RowSink* sinks = sinks_.load(std::memory_order_acquire);
    if (!sinks) return;  // before the record was opened
    sinks->abort({{"type", "summary"},
                  {"status", end.status},
                  {"reason", end.message},
                  {"report", end.report},
                  {"elapsed_s", std::chrono::duration<double>(Clock::now() - started_).count()},
                  {"exit_code", end.exit_code}});
  }

 private:
  std::atomic<RowSink*> sinks_{nullptr};
  Clock::time_point started_;
};

// The backend, wrapped in the test-only fault injector when --inject asks.
std::unique_ptr<Backend> with_injected_faults(const Comm& world, std::unique_ptr<Backend> backend,
                                              const RunOptions& options) {
  if (options.inject.empty()) return backend;
  std::vector<fault::Fault> faults;
  for (const auto& spec : options.inject) {
    faults.push_back(fault::parse_fault(spec));
    if (faults.back().rank >= world.size())
      throw UsageError(fmt::format("--inject '{}': rank {} but the job has {} ranks", spec, faults.back().rank,
                                   world.size()));
  }
  if (world.rank() == 0)
    std::fprintf(stderr, "fabricbench run: --inject is for tests only: injecting %zu fault(s); the record says so\n",
                 faults.size());
  return fault::with_faults(std::move(backend), std::move(faults), world.rank());
}

nlohmann::ordered_json summary(const RunOptions& options, const RunTotals& totals, double seconds, int exit_code) {
  const double avg = totals.rows ? totals.busbw_sum_gbps / static_cast<double>(totals.rows) : 0.0;
  nlohmann::ordered_json s = {{"type", "summary"},         {"status", "complete"},     {"rows", totals.rows},
                              {"skipped", totals.skipped}, {"wrong", options.check ? totals.wrong : -1}};
  if (options.check) {
    std::vector<int> ranks;
    for (std::size_t r = 0; r < totals.wrong_by_rank.size(); ++r)
      if (totals.wrong_by_rank[r] > 0) ranks.push_back(static_cast<int>(r));
    s["wrong_ranks"] = ranks;
  }
  if (options.duration_s > 0) s["passes"] = totals.passes;
  s["avg_busbw_gbps"] = avg;
  s["elapsed_s"] = seconds;
  s["exit_code"] = exit_code;
  return s;
}

// The closing lines on stderr: totals, and where the wrong elements were.
void report_end(const RunFlags& flags, const RunOptions& options, const RunTotals& totals, double seconds) {
  std::string passes = options.duration_s > 0 ? fmt::format("{} passes, ", totals.passes) : "";
  std::fprintf(stderr, "fabricbench run: %s%zu rows, %zu skipped, %s, %.1f s%s%s\n", passes.c_str(), totals.rows,
               totals.skipped,
               options.check ? fmt::format("{} wrong elements", totals.wrong).c_str() : "not checked", seconds,
               flags.out.empty() ? "" : ", record ", flags.out.c_str());
  for (std::size_t r = 0; r < totals.wrong_by_rank.size(); ++r)
    if (totals.wrong_by_rank[r] > 0)
      std::fprintf(stderr, "fabricbench run: rank %zu: %lld wrong elements%s\n", r,
                   static_cast<long long>(totals.wrong_by_rank[r]),
                   flags.out.empty() ? "" : " (by op, size and iteration in the record)");
}

// The sweep itself, watched. An error on any rank ends the job with a
// closing line naming the rank (through the watchdog), never a silent hang.
RunTotals sweep(Runner& runner, Watchdog* watchdog) {
  try {
    const RunTotals totals = runner.run();
    if (watchdog) watchdog->finish();
    return totals;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    if (watchdog) watchdog->fail(e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitRunError);
    throw;
  }
}

int execute(const Comm& world, int argc, char** argv, const RunFlags& flags, const RunOptions& options) {
  auto usable = usable_backend(world, options.backend, "run");
  if (!usable) return kExitUsage;
  const NodeMap nodes = map_nodes(world);
  SinkList sinks;
  ProgressBoard board;
  RecordCloser closer;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Watchdog> watchdog;
  try {
    // Every check here reaches the same verdict on every rank (agreed where needed).
    backend = with_injected_faults(world, std::move(usable), options);
    Runner(world, nodes, *backend, options, &sinks).preflight();
    if (options.timeout_s != 0)
      watchdog = std::make_unique<Watchdog>(world, nodes, watch::TimeoutPolicy{options.timeout_s}, board,
                                            [&closer](const watch::RunEnd& end) { closer(end); });
  } catch (const UsageError& e) {
    if (world.rank() == 0) std::fprintf(stderr, "fabricbench run: %s\n", e.what());
    return kExitUsage;
  }
  Runner runner(world, nodes, *backend, options, &sinks);
  runner.watch(&board);
  // What the figures are measured on, from every rank: recorded right after
  // the header (docs/results-schema.md, "inventory"). The watchdog is already
  // armed: a hang here closes the record too.
  const auto inventory = inventory_lines(world, nodes);
  const auto started = Clock::now();
  if (world.rank() == 0) {
    sinks = make_sinks(flags);
    sinks.begin(run_header(argc, argv, world, nodes, *backend, options));
    for (const auto& line : inventory) sinks.line(line);
    closer.arm(&sinks, started);
  }
  const RunTotals totals = sweep(runner, watchdog.get());
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const int exit_code = totals.wrong > 0 ? kExitFailed : kExitOk;
  if (world.rank() == 0) {
    sinks.end(summary(options, totals, seconds, exit_code));
    report_end(flags, options, totals, seconds);
  }
  return exit_code;
}

}  // namespace

int run_main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  const Comm world = Comm::world();
  CLI::App app{"Sweep collectives and point-to-point ops over message sizes, under mpirun or srun.", "fabricbench run"};
  RunFlags flags;
  add_run_flags(app, flags);
  RunOptions options;
  const int stop = parse_everywhere(world, app, argc, argv, flags, options);
  if (stop >= 0) return stop;
  setup_logging(world.rank(), verbosity(flags));
  return run_or_abort([&] { return execute(world, argc, argv, flags, options); });
}

}  // namespace fb::cli
