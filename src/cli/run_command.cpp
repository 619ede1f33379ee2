// `fabricbench run`: parse and agree on the options across ranks, open the
// sinks on rank 0, hand the plan to the engine, close the record.
#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "fabricbench/backends/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/sinks.hpp"
#include "fabricbench/topo/report.hpp"
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

// Parse on every rank; any rank's error stops every rank with one message.
// Returns the exit code to stop with, or -1 to go on.
int parse_everywhere(const Comm& world, CLI::App& app, int argc, char** argv, RunFlags& flags, RunOptions& options) {
  std::string error;
  try {
    app.parse(argc, argv);
    options = resolve(flags);
  } catch (const CLI::CallForHelp&) {
    if (world.rank() == 0) std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    error = e.what();
  } catch (const UsageError& e) {
    error = e.what();
  }
  error = agree_on_error(world, error);
  if (error.empty()) {
    // Same flags everywhere? A launcher that passes different arguments to
    // different ranks would otherwise hang or compare unlike with unlike.
    std::int64_t hash = static_cast<std::int64_t>(fnv1a(canonical(options)) >> 1);
    std::int64_t root_hash = hash;
    world.bcast_quiet({&root_hash, 1}, 0);
    error = agree_on_error(world, root_hash == hash ? "" : "the options differ from rank 0's: launch every rank "
                                                           "with the same arguments");
  }
  if (error.empty() && world.rank() == 0) {
    if (!flags.out.empty()) error = check_writable(flags.out, "--out");
    if (error.empty() && !flags.csv.empty()) error = check_writable(flags.csv, "--csv");
  }
  error = agree_on_error(world, error);
  if (error.empty()) return -1;
  if (world.rank() == 0) std::fprintf(stderr, "fabricbench run: %s\n", error.c_str());
  return kExitUsage;
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
  const BackendInfo* info = find_backend(options.backend);
  const std::string absent = agree_on_error(world, info->absent_reason());
  if (!absent.empty()) {
    if (world.rank() == 0) std::fprintf(stderr, "fabricbench run: backend %s is not usable: %s\n", info->name.c_str(),
                                        absent.c_str());
    return kExitUsage;
  }
  const NodeMap nodes = map_nodes(world);
  auto backend = info->make();
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
  const auto inventory = topo::gather_inventory(world, nodes);
  if (world.rank() == 0) sinks = make_sinks(flags);
  const auto started = std::chrono::steady_clock::now();
  if (world.rank() == 0) {
    sinks.begin(run_header(argc, argv, world, nodes, *backend, options));
    for (const auto& line : inventory) sinks.line(line);
    for (const auto& d : topo::find_differences(inventory))
      spdlog::warn("ranks differ in {} ({} values): see fabricbench topo", d.attribute, d.values.size());
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
  return abort_on_error([&] { return execute(world, argc, argv, flags, options); });
}

}  // namespace fb::cli
