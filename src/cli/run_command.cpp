// `fabricbench run`: parse and agree on the options across ranks, open the
// sinks on rank 0, hand the plan to the engine, close the record.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "command_support.hpp"
#include "bimodal_warning.hpp"
#include "curve_warning.hpp"
#include "environment_warning.hpp"
#include "fabric_health.hpp"
#include "commands.hpp"
#include "fabricbench/backends/registry.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/op_desc.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/sinks.hpp"
#include "fabricbench/core/timing.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "measuring_command.hpp"
#include "fabricbench/core/log.hpp"

namespace fb::cli {
namespace {

// Rank 0: rows per scope and the skips, to tell a run that measured what it
// was asked from one that measured nothing of it.
class RowCount final : public RowSink {
 public:
  void begin(const RunHeader&) override {}
  void measurement(const Measurement& row) override {
    ++rows_by_scope[row.scope];
    const auto reason = stop_reason_named(row.stopped_by);
    if (reason && *reason != StopReason::ci && *reason != StopReason::fixed) ++unsettled_by[*reason];
  }
  void skip(const Skip& s) override { skips.push_back(s); }
  void end(const Summary&) override {}
  std::map<std::string, std::size_t> rows_by_scope;
  // Rows a cap ended before their interval reached the target, by the cap.
  std::map<StopReason, std::size_t> unsettled_by;
  std::vector<Skip> skips;
};

// The cap that ended a row, as the run's options set it.
std::string cap_name(StopReason cap, const RunOptions& options) {
  switch (cap) {
    case StopReason::time:
      return fmt::format("the {:g} s time cap",
                         options.time_budget_s > 0 ? options.time_budget_s : kDefaultSizeSeconds);
    case StopReason::bytes:
      return "the bytes cap";
    case StopReason::iterations:
      return fmt::format("the cap of {} timings", kMaxAdaptiveSamples);
    case StopReason::ci:
    case StopReason::fixed:
      break;  // not caps: never counted as unsettled
  }
  return std::string(name(cap));
}

// "" when every row's median reached the interval target (or none was set);
// else how many a cap ended first, by cap, and what to do about it. A row
// that stopped early is a figure to hold more loosely: say so at the end of
// the run, not only in the record's stopped_by.
[[nodiscard]] std::string unsettled_rows(const RunOptions& options, const RowCount& count, std::size_t rows) {
  // A budget alone stops at the default target too (TimingPlan::ci_target).
  const bool adaptive = options.median_ci > 0 || options.time_budget_s > 0;
  if (!adaptive || count.unsettled_by.empty()) return {};
  const double target = options.median_ci > 0 ? options.median_ci : kDefaultMedianCi;
  std::size_t n = 0;
  std::string by;
  for (const auto& [cap, rows] : count.unsettled_by) {
    n += rows;
    by += fmt::format("{}{} at {}", by.empty() ? "" : ", ", rows, cap_name(cap, options));
  }
  return fmt::format(
      "{} of {} rows ended before the 95% interval of their median was within +-{:g}% ({}); their time_ci_low_us "
      "and time_ci_high_us in the record say how wide it is{} (docs/run.md, When a size stops)",
      n, rows, target * 100, by,
      count.unsettled_by.count(StopReason::time) ? "; --time-budget S gives each size longer" : "");
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

// run's own part of the measuring sequence (measuring_command.hpp): the
// engine's preflight and sweep, the table and files, the verdict.
class RunCommand final : public Measuring {
 public:
  RunCommand(const RunFlags& flags, const RunOptions& options) : flags_(flags), options_(options) {}
  void prepare() override {
    // Every check here reaches the same verdict on every rank (agreed where needed).
    runner_.emplace(job().world, job().nodes, *job().backend, options_, &job().sinks);
    runner_->preflight();
    warn_if_alone();
    counters_ = make_node_counters(job().nodes, flags_.counters);
    runner_->count_errors(counters_.get());
  }
  void watch(ProgressBoard& board) override { runner_->watch(&board); }
  void open(RunHeader& header) override {
    auto counter = std::make_unique<RowCount>();
    count_ = counter.get();
    job().sinks.add(std::move(counter));
    if (show_progress(flags_.progress) && !flags_.quiet) job().sinks.add(make_progress_sink(stderr));
    if (!flags_.quiet) job().sinks.add(make_table_sink(stdout));
    if (flags_.quiet) job().sinks.add(make_skip_note_sink(stderr, "run"));  // the table says them otherwise
    if (!flags_.csv.empty()) job().sinks.add(make_csv_sink(flags_.csv, flags_.overwrite));
    job().sinks.add(make_curve_warning_sink(stderr));
    job().sinks.add(make_bimodal_warning_sink(stderr));
    job().sinks.add(make_environment_warning_sink(stderr));
    job().sinks.add(make_fabric_health_sink(stderr, "fabricbench run"));
    header.options = to_json(options_);
    header.counters = flags_.counters;
  }
  void measure() override {
    runner_->nvlink_domains(job().rank_domains);
    totals_ = runner_->run();
  }
  Summary close(double seconds) override {
    seconds_ = seconds;
    int code = totals_.wrong > 0 ? kExitFailed : kExitOk;
    nothing_ = nothing_measured(flags_, options_, *count_);
    if (!nothing_.empty()) code = kExitUsage;
    Summary s;
    s.sweep = totals_.closing(options_.check, options_.duration_s > 0);
    s.elapsed_s = seconds;
    s.exit_code = code;
    s.reason = nothing_;
    return s;
  }
  int report(int code) override {
    report_end(flags_, options_, totals_, seconds_);
    if (const auto unsettled = unsettled_rows(options_, *count_, totals_.rows); !unsettled.empty())
      user_log().info("fabricbench run: {}", unsettled);
    if (!nothing_.empty()) user_log().error("fabricbench run: {}", nothing_);
    return code;
  }

 private:
  // A run started without mpirun is one rank: its collectives move no byte
  // between ranks, yet the table would read like a measurement of the path.
  // Copy paths and kernel launches (op_desc.hpp: copy) are one rank's own.
  void warn_if_alone() const {
    if (job().world.size() != 1) return;
    const bool between_ranks =
        std::any_of(options_.ops.begin(), options_.ops.end(), [](Op op) { return !op_desc(op).copy; });
    if (!between_ranks) return;
    user_log().warn(
        "fabricbench run: warning: one rank: no byte crosses a link, so the collective and point-to-point rows time "
        "a copy inside this rank; launch it across the ranks to measure (mpirun -np 2 fabricbench run, or srun; "
        "README.md)");
  }

  const RunFlags& flags_;
  const RunOptions& options_;
  std::optional<Runner> runner_;
  std::unique_ptr<RowCounters> counters_;
  const RowCount* count_ = nullptr;
  RunTotals totals_;
  std::string nothing_;
  double seconds_ = 0;
};

}  // namespace

int run_main(int argc, char** argv) {
  CLI::App app{"Sweep collectives and point-to-point ops over message sizes, under mpirun or srun.", "fabricbench run"};
  RunFlags flags;
  add_run_flags(app, flags);
  RunOptions options;
  const auto validate = [&] {
    options = resolve(flags);
    check_ranks_exist(options, Comm::world().size(), app.count("--peers") > 0);
  };
  const auto outputs = [&] { return Outputs{{{flags.out, "--out"}, {flags.csv, "--csv"}}, flags.overwrite}; };
  const CommandEntry entry{"run",
                           app,
                           validate,
                           outputs,
                           [&] { return verbosity(flags); },
                           {},
                           [&] { return resolve(flags).timeout_s != 0; }};
  return command_main(&argc, &argv, entry,
                      [&](const Comm& world) {
                        RunCommand command(flags, options);
                        return measure(world, argc, argv,
                                       {.command = "run",
                                        .backend = options.backend,
                                        .inject = options.inject,
                                        .timeout = watch::TimeoutPolicy{options.timeout_s},
                                        .device = options.device,
                                        .record = flags.out,
                                        .overwrite = flags.overwrite,
                                        .totals = ClosingTotals::sweep},
                                       command);
                      });
}

}  // namespace fb::cli
