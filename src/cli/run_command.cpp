// `fabricbench run`: parse and agree on the options across ranks, open the
// sinks on rank 0, hand the plan to the engine, close the record.
#include <fmt/format.h>

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
#include "record_header.hpp"
#include "run_options.hpp"
#include "watched_run.hpp"

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
      [&] { options = resolve(flags); },
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

int execute(const Comm& world, int argc, char** argv, const RunFlags& flags, const RunOptions& options) {
  auto usable = usable_backend(world, options.backend, "run");
  if (!usable) return kExitUsage;
  const NodeMap nodes = map_nodes(world);
  SinkList sinks;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<WatchedRun> watched;
  try {
    // Every check here reaches the same verdict on every rank (agreed where needed).
    backend = with_injected_faults(world, std::move(usable), options.inject, "run");
    Runner(world, nodes, *backend, options, &sinks).preflight();
    watched = std::make_unique<WatchedRun>(world, nodes, watch::TimeoutPolicy{options.timeout_s}, "run");
  } catch (const UsageError& e) {
    return usage_exit(world, "run", e.what());
  }
  Runner runner(world, nodes, *backend, options, &sinks);
  runner.watch(&watched->board());
  RunTotals totals;
  auto started = Clock::now();
  // Everything from here is watched: a hang, a lost rank, or an error on one
  // rank (a record rank 0 cannot open) ends the job with the reason.
  watched->run([&] {
    // What the figures are measured on, from every rank: recorded right
    // after the header (docs/results-schema.md, "inventory").
    const auto inventory = inventory_lines(world, nodes);
    started = Clock::now();
    if (world.rank() == 0) {
      sinks = make_sinks(flags);
      sinks.begin(run_header(argc, argv, world, nodes, *backend, options));
      for (const auto& line : inventory) sinks.line(line);
      watched->arm([&sinks](const nlohmann::ordered_json& summary) { sinks.abort(summary); });
    }
    totals = runner.run();
  });
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
  if (const int stop = same_command_everywhere(world, "run"); stop >= 0) return stop;
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
