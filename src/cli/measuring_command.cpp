#include "measuring_command.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <memory>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/watch_host.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "watched_run.hpp"

namespace fb::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Each phase's time since the previous mark (the first since this file's
// static initialisation, just before main), so bench/scripts/bench-startup.sh can
// name what a command spends beyond MPI_Init.
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

// Collective: `step`'s refusal (a UsageError on any rank), "" when it ran.
std::string agreed_refusal(const Comm& world, const std::function<void()>& step) {
  std::string refusal;
  try {
    step();
  } catch (const UsageError& e) {
    refusal = e.what();
  }
  return agree_on_error(world, refusal);
}

// Collective: the backend with its planted faults, then the command's own
// preparation. "" when the run can go on, else the refusal, on every rank.
std::string prepare(const Comm& world, const MeasuringPlan& plan, Measuring& command, Measuring::Job& job,
                    std::unique_ptr<Backend>& backend) {
  return agreed_refusal(world, [&] {
    if (!plan.backend.empty()) {
      backend = with_injected_faults(world, usable_backend(world, plan.backend), plan.inject, plan.command);
      job.backend = backend.get();
    }
    command.prepare();
  });
}

// Rank 0, once every rank has measured: the closing line, the record sealed,
// the command's last words. Returns the exit code.
int close(const MeasuringPlan& plan, Measuring& command, SinkList& sinks, double seconds) {
  Summary summary = command.close(seconds);
  int code = output_failure(plan.command, sinks.error(), summary.exit_code);
  summary.exit_code = code;
  sinks.end(summary);
  if (code != kExitRunError) code = output_failure(plan.command, sinks.error(), code);  // the closing line's own write
  return command.report(code);
}

// MPI_THREAD_SINGLE where the command, with these flags, runs no thread of
// its own, its watchdog in a process forked here; a flag it cannot read yet
// is refused after MPI_Init, at FUNNELED. FABRICBENCH_WATCHDOG=thread keeps
// the watchdog on a thread (FUNNELED), to compare the two.
ThreadLevel level_for(const CommandEntry& entry, const FlagsParsed& parsed) {
  if (!parsed.ok() || !entry.watchdog) return ThreadLevel::funneled;
  try {
    if (!entry.watchdog()) return ThreadLevel::single;
  } catch (...) {  // the flag is refused once MPI runs (agree_on_flags), with one message
    return ThreadLevel::funneled;
  }
  const char* mode = std::getenv("FABRICBENCH_WATCHDOG");
  if (mode && std::string_view(mode) == "thread") return ThreadLevel::funneled;
  return WatchHost::start() ? ThreadLevel::single : ThreadLevel::funneled;
}

}  // namespace

void startup_mark(const char* phase) { startup.mark(phase); }

int command_main(int* argc, char*** argv, const CommandEntry& entry, const std::function<int(const Comm&)>& body) {
  // The thread level follows the flags, so they are parsed before MPI_Init
  // (which may edit argv, but Open MPI and MPICH leave a program's own
  // arguments alone); checked and agreed once MPI runs.
  const FlagsParsed parsed = parse_flags(entry.app, *argc, *argv);
  startup.mark("flags parsed");
  MpiSession mpi(argc, argv, level_for(entry, parsed));
  startup.mark("MPI_Init");
  const Comm world = Comm::world();
  if (const int stop = same_command_everywhere(world, entry.command); stop >= 0) return stop;
  const int stop =
      agree_on_flags(world, parsed, entry.app, entry.command, entry.validate, entry.outputs, entry.per_rank);
  if (stop >= 0) return stop;
  startup.mark("command and option agreement");
  setup_logging(world.rank(), entry.verbosity());
  return run_or_abort([&] { return body(world); });
}

int measure(const Comm& world, int argc, char** argv, const MeasuringPlan& plan, Measuring& command) {
  const NodeMap nodes = map_nodes(world);
  const std::string run_id = shared_run_id(world);
  startup.mark("node map and run id");
  SinkList sinks;  // before the watchdog, which may close the record, so it outlives it
  Measuring::Job job{world, nodes, run_id, sinks};
  command.job_ = &job;
  std::unique_ptr<Backend> backend;
  std::string refusal = prepare(world, plan, command, job, backend);
  startup.mark("backend and preparation");
  std::unique_ptr<WatchedRun> watched;
  if (refusal.empty()) {
    try {
      watched = std::make_unique<WatchedRun>(world, nodes, plan.timeout, plan.command);
    } catch (const UsageError& e) {  // alike on every rank
      refusal = e.what();
    }
  }
  if (refusal.empty()) {
    startup.mark("watchdog");
    command.watch(watched->board());
    // Any other error ends the job through the watchdog, as in the measurement.
    watched->guard([&] { refusal = agreed_refusal(world, [&] { command.prepare_watched(); }); });
    startup.mark("watched preparation");
  }
  if (!refusal.empty()) {
    command.refused(refusal);
    return usage_exit(world, plan.command, refusal);
  }
  auto started = Clock::now();
  // Everything from here is watched: a hang, a lost rank, or an error on one
  // rank (a record rank 0 cannot open) ends the job with the reason.
  watched->run([&] {
    // What the figures are measured on, from every rank: recorded right
    // after the header (docs/results-schema.md, "inventory").
    const auto inventory = inventory_lines(world, nodes, plan.device);
    job.rank_domains = inventory.rank_domains;
    startup.mark("inventory");
    started = Clock::now();
    if (world.rank() == 0) {
      const auto open = [&] {
        if (!plan.record.empty()) sinks.add(make_record_sink(plan.record, plan.overwrite, plan.totals));
        RunHeader header = record_header(plan.command, argc, argv, world, nodes, run_id);
        if (backend) name_backend(header, *backend);
        command.open(header);
        sinks.begin(header);
        for (const auto& line : inventory.lines) sinks.record_line(line);
      };
      watched->open_record(open, [&sinks, &command](const Summary& summary) {
        sinks.abort(summary);
        command.ended_early(summary);
      });
      startup.mark("record header");
      spdlog::debug("start-up: {}", startup.text());
    }
    command.measure();
  });
  command.measured();
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::int64_t code = world.rank() == 0 ? close(plan, command, sinks, seconds) : kExitOk;
  world.bcast_quiet({&code, 1}, 0);
  startup.mark("record closed");
  if (world.rank() == 0) spdlog::debug("start and end: {}", startup.text());
  return static_cast<int>(code);
}

}  // namespace fb::cli
