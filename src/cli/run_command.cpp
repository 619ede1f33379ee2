// `fabricbench run`: parse and agree on the options across ranks, open the
// sinks on rank 0, hand the plan to the engine, close the record.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "curve_warning.hpp"
#include "commands.hpp"
#include "fabricbench/backends/registry.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/sinks.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "watched_run.hpp"
#include "fabricbench/core/log.hpp"

namespace fb::cli {
namespace {

RunHeader run_header(int argc, char** argv, const Comm& world, const NodeMap& nodes, const Backend& backend,
                     const RunOptions& options, std::string run_id) {
  auto header = record_header("run", argc, argv, world, nodes, std::move(run_id));
  name_backend(header, backend);
  header.options = to_json(options);
  return header;
}

int parse_everywhere(const Comm& world, CLI::App& app, int argc, char** argv, RunFlags& flags, RunOptions& options) {
  return parse_on_every_rank(
      world, app, argc, argv, "run",
      [&] {
        options = resolve(flags);
        check_ranks_exist(options, world.size(), app.count("--peers") > 0);
      },
      [&] { return Outputs{{{flags.out, "--out"}, {flags.csv, "--csv"}}, flags.overwrite}; });
}

// Rank 0: rows per scope and the skips, to tell a run that measured what it
// was asked from one that measured nothing of it.
class RowCount final : public RowSink {
 public:
  void begin(const RunHeader&) override {}
  void measurement(const Measurement& row) override { ++rows_by_scope[row.scope]; }
  void skip(const Skip& s) override { skips.push_back(s); }
  void end(const Summary&) override {}
  std::map<std::string, std::size_t> rows_by_scope;
  std::vector<Skip> skips;
};

SinkList make_sinks(const RunFlags& flags, std::unique_ptr<RowCount> count) {
  SinkList sinks;
  sinks.add(std::move(count));
  if (show_progress(flags.progress) && !flags.quiet) sinks.add(make_progress_sink(stderr));
  if (!flags.quiet) sinks.add(make_table_sink(stdout));
  if (flags.quiet) sinks.add(make_skip_note_sink(stderr, "run"));  // the table says them otherwise
  if (!flags.out.empty()) sinks.add(make_record_sink(flags.out, flags.overwrite));
  if (!flags.csv.empty()) sinks.add(make_csv_sink(flags.csv, flags.overwrite));
  sinks.add(make_curve_warning_sink(stderr));
  return sinks;
}

// "" when the run measured what it was asked; else why not: nothing at all,
// or nothing at a scope named in --scope (`all` asks for the scopes that apply).
[[nodiscard]] std::string nothing_measured(const RunFlags& flags, const RunOptions& options, const RowCount& count) {
  std::string reasons;
  for (const auto& s : count.skips) reasons += (reasons.empty() ? "" : "; ") + describe(s);
  if (count.rows_by_scope.empty())
    return fmt::format("nothing was measured: {}", reasons.empty() ? "every measurement was skipped" : reasons);
  const bool all = std::find(flags.scopes.begin(), flags.scopes.end(), "all") != flags.scopes.end();
  if (all) return {};
  for (Scope scope : options.scopes) {
    const std::string n(name(scope));
    if (count.rows_by_scope.count(n)) continue;
    std::string why;
    for (const auto& s : count.skips)
      if (s.scope == n) why += (why.empty() ? "" : "; ") + describe(s);
    return fmt::format("--scope {} measured nothing: {}", n, why.empty() ? "every measurement was skipped" : why);
  }
  return {};
}

using Clock = std::chrono::steady_clock;

// Where the start goes (-v, rank 0): each phase's time since the previous
// mark (the first since this file's static initialisation, just before
// main), so scripts/bench-startup.sh can name what a run spends beyond
// MPI_Init; logged once the record header is written and again at the end.
class StartupMarks {
 public:
  void mark(const char* phase) {
    const auto now = Clock::now();
    text_ += fmt::format("{}{} {:.1f} ms", text_.empty() ? "" : ", ", phase,
                         std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }
  const std::string& text() const { return text_; }

 private:
  Clock::time_point last_ = Clock::now();
  std::string text_;
};
StartupMarks startup;

Summary summary(const RunOptions& options, const RunTotals& totals, double seconds, int exit_code) {
  SweepTotals::Figures figures;
  figures.wrong = options.check ? totals.wrong : -1;
  if (options.check) {
    std::vector<int> ranks;
    for (std::size_t r = 0; r < totals.wrong_by_rank.size(); ++r)
      if (totals.wrong_by_rank[r] > 0) ranks.push_back(static_cast<int>(r));
    figures.wrong_ranks = ranks;
  }
  if (options.duration_s > 0) figures.passes = totals.passes;
  figures.avg_busbw_gbps = totals.rows ? totals.busbw_sum_gbps / static_cast<double>(totals.rows) : 0.0;
  Summary s;
  s.sweep = SweepTotals{totals.rows, totals.skipped, figures};
  s.elapsed_s = seconds;
  s.exit_code = exit_code;
  return s;
}

// The closing lines on stderr: totals, and where the wrong elements were.
void report_end(const RunFlags& flags, const RunOptions& options, const RunTotals& totals, double seconds) {
  std::string passes = options.duration_s > 0 ? fmt::format("{} passes, ", totals.passes) : "";
  user_log().info("fabricbench run: {}{} rows, {} skipped, {}, {:.1f} s{}{}", passes, totals.rows, totals.skipped,
                  options.check ? fmt::format("{} wrong elements", totals.wrong) : "not checked", seconds,
                  flags.out.empty() ? "" : ", record ", flags.out);
  for (std::size_t r = 0; r < totals.wrong_by_rank.size(); ++r)
    if (totals.wrong_by_rank[r] > 0)
      user_log().info("fabricbench run: rank {}: {} wrong elements{}", r, totals.wrong_by_rank[r],
                      flags.out.empty() ? "" : " (by op, size and iteration in the record)");
}

// Rank 0: closes the sinks with the run's verdict; returns the exit code.
int finish(SinkList& sinks, const RowCount& count, const RunFlags& flags, const RunOptions& options,
           const RunTotals& totals, double seconds) {
  int code = totals.wrong > 0 ? kExitFailed : kExitOk;
  const std::string nothing = nothing_measured(flags, options, count);
  if (!nothing.empty()) code = kExitUsage;
  code = output_failure("run", sinks.error(), code);
  Summary s = summary(options, totals, seconds, code);
  s.reason = nothing;
  sinks.end(s);
  report_end(flags, options, totals, seconds);
  if (!nothing.empty()) user_log().error("fabricbench run: {}", nothing);
  if (code != kExitRunError) code = output_failure("run", sinks.error(), code);  // the summary's own write
  return code;
}

int execute(const Comm& world, int argc, char** argv, const RunFlags& flags, const RunOptions& options) {
  auto usable = usable_backend(world, options.backend, "run");
  if (!usable) return kExitUsage;
  const NodeMap nodes = map_nodes(world);
  startup.mark("backend and node map");
  SinkList sinks;
  const RowCount* count = nullptr;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<WatchedRun> watched;
  try {
    // Every check here reaches the same verdict on every rank (agreed where needed).
    backend = with_injected_faults(world, std::move(usable), options.inject, "run");
    Runner(world, nodes, *backend, options, &sinks).preflight();
    startup.mark("preflight");
    watched = std::make_unique<WatchedRun>(world, nodes, watch::TimeoutPolicy{options.timeout_s}, "run");
    startup.mark("watchdog");
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
    const auto inventory = inventory_lines(world, nodes, options.device);
    startup.mark("inventory");
    const std::string run_id = shared_run_id(world);
    started = Clock::now();
    if (world.rank() == 0) {
      auto counter = std::make_unique<RowCount>();
      count = counter.get();
      sinks = make_sinks(flags, std::move(counter));
      sinks.begin(run_header(argc, argv, world, nodes, *backend, options, run_id));
      for (const auto& line : inventory) sinks.record_line(line);
      watched->arm([&sinks](const Summary& summary) { sinks.abort(summary); });
      startup.mark("record header");
      spdlog::debug("start-up: {}", startup.text());
    }
    totals = runner.run();
  });
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  startup.mark("measuring and watchdog end");
  // Rank 0 alone knows the rows and whether its files were written: every rank ends with its code.
  std::int64_t exit_code = world.rank() == 0 ? finish(sinks, *count, flags, options, totals, seconds) : kExitOk;
  world.bcast_quiet({&exit_code, 1}, 0);
  startup.mark("record closed");
  if (world.rank() == 0) spdlog::debug("start and end: {}", startup.text());
  return static_cast<int>(exit_code);
}

}  // namespace

int run_main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  startup.mark("MPI_Init");
  const Comm world = Comm::world();
  if (const int stop = same_command_everywhere(world, "run"); stop >= 0) return stop;
  CLI::App app{"Sweep collectives and point-to-point ops over message sizes, under mpirun or srun.", "fabricbench run"};
  RunFlags flags;
  add_run_flags(app, flags);
  RunOptions options;
  const int stop = parse_everywhere(world, app, argc, argv, flags, options);
  if (stop >= 0) return stop;
  startup.mark("command and option agreement");
  setup_logging(world.rank(), verbosity(flags));
  return run_or_abort([&] { return execute(world, argc, argv, flags, options); });
}

}  // namespace fb::cli
