// `fabricbench run`: parse and agree on the options across ranks, open the
// sinks on rank 0, hand the plan to the engine, close the record.
#include <fmt/format.h>

#include <chrono>
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

int execute(const Comm& world, int argc, char** argv, const RunFlags& flags, const RunOptions& options) {
  auto backend = usable_backend(world, options.backend, "run");
  if (!backend) return kExitUsage;
  const NodeMap nodes = map_nodes(world);
  SinkList sinks;
  Runner runner(world, nodes, *backend, options, &sinks);
  try {
    runner.preflight();
  } catch (const UsageError& e) {
    // Raised on every rank alike (agreed), before anything is written.
    if (world.rank() == 0) std::fprintf(stderr, "fabricbench run: %s\n", e.what());
    return kExitUsage;
  }
  // What the figures are measured on, from every rank: recorded right after
  // the header (docs/results-schema.md, "inventory").
  const auto inventory = inventory_lines(world, nodes);
  if (world.rank() == 0) sinks = make_sinks(flags);
  const auto started = std::chrono::steady_clock::now();
  if (world.rank() == 0) {
    sinks.begin(run_header(argc, argv, world, nodes, *backend, options));
    for (const auto& line : inventory) sinks.line(line);
  }
  const RunTotals totals = runner.run();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const int exit_code = totals.wrong > 0 ? kExitFailed : kExitOk;
  if (world.rank() == 0) {
    const double avg = totals.rows ? totals.busbw_sum_gbps / static_cast<double>(totals.rows) : 0.0;
    sinks.end({{"type", "summary"},
               {"status", "complete"},
               {"rows", totals.rows},
               {"skipped", totals.skipped},
               {"wrong", options.check ? totals.wrong : -1},
               {"avg_busbw_gbps", avg},
               {"elapsed_s", seconds},
               {"exit_code", exit_code}});
    std::fprintf(stderr, "fabricbench run: %zu rows, %zu skipped, %s, %.1f s%s%s\n", totals.rows, totals.skipped,
                 options.check ? fmt::format("{} wrong elements", totals.wrong).c_str() : "not checked", seconds,
                 flags.out.empty() ? "" : ", record ", flags.out.c_str());
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
