// `fabricbench pairs`: parse and agree on the options, pick the nodes, hand
// them to the pairs engine; on rank 0 stream `pair` lines into the record as
// rounds finish, then print the matrices and findings and close the record.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "commands.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/pairs_report.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/sizes.hpp"
#include "pairs_options.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "watched_run.hpp"
#include "fabricbench/core/log.hpp"

namespace fb::cli {
namespace {

// Rank 0: every finished pair goes into the record at once, synced per round,
// so a crash keeps every finished round.
class RecordObserver final : public PairsObserver {
 public:
  RecordObserver(RecordWriter& record, const PairsLabels& labels, bool progress)
      : record_(record), labels_(labels), progress_(progress) {}
  void pair(const PairMeasurement& m) override { record_.write(pair_line(m, labels_)); }
  void round_done(int done, int total, bool retest) override {
    record_.sync();
    if (progress_) user_log().info("fabricbench pairs: {} {}/{} done", retest ? "retest round" : "round", done, total);
  }

 private:
  RecordWriter& record_;
  const PairsLabels& labels_;
  bool progress_;
};

void print_intro(const PairsRunner& runner, const PairsLabels& labels, const std::string& backend) {
  const int n = static_cast<int>(labels.hosts.size());
  const int rounds = n - 1 + n % 2;
  std::printf("# fabricbench pairs: %d nodes, %d pairs in %d rounds of %d at once%s; %s x %d in flight for bandwidth, "
              "%s for latency; backend %s\n# nodes: %s\n\n",
              n, n * (n - 1) / 2, rounds, n / 2,
              runner.rails() > 1 ? fmt::format(", on each of {} rails", runner.rails()).c_str() : "",
              format_bytes(labels.options.bytes).c_str(), labels.options.window,
              format_bytes(labels.options.latency_bytes).c_str(), backend.c_str(),
              fmt::format("{}", fmt::join(labels.hosts, " ")).c_str());
  std::fflush(stdout);
}

Summary summary_line(const PairsResult& r, const PairsLabels& labels, double seconds, int exit_code) {
  std::size_t retests = 0;
  for (const auto& m : r.measured) retests += m.retest;
  Summary s;
  s.pairs = PairsTotals{r.measured.size() - retests,
                        retests,
                        r.rounds,
                        r.retest_rounds,
                        r.finding_count(),
                        r.failing_count(),
                        bad_hosts(r, labels),
                        r.analyses.front().refs.unidir_gbps,
                        r.analyses.front().refs.bidir_gbps,
                        labels.options.analysis.threshold};
  s.elapsed_s = seconds;
  s.exit_code = exit_code;
  return s;
}

int execute(const Comm& world, int argc, char** argv, const PairsFlags& flags, PairsOptions options) {
  auto usable = usable_backend(world, flags.backend, "pairs");
  if (!usable) return kExitUsage;
  std::unique_ptr<Backend> backend;
  const NodeMap nodes = map_nodes(world);
  std::optional<PairsRunner> runner;
  RecordWriter record;  // before the watchdog, which may seal it, so it outlives it
  std::unique_ptr<WatchedRun> watched;
  try {
    // Every rank holds the same host list, so every rank reaches the same verdict.
    if (!flags.nodes.empty()) options.nodes = select_nodes(flags.nodes, nodes.node_hosts);
    backend = with_injected_faults(world, std::move(usable), flags.inject, "pairs");
    runner.emplace(world, nodes, *backend, options);
    runner->preflight();
    watched = std::make_unique<WatchedRun>(world, nodes, watch::TimeoutPolicy{options.timeout_s}, "pairs");
    runner->watch(&watched->board());
  } catch (const UsageError& e) {
    return usage_exit(world, "pairs", e.what());
  }
  const PairsLabels labels = make_labels(runner->selection(), nodes, options);
  RecordObserver observer(record, labels, show_progress(flags.progress) && !flags.quiet);
  auto started = std::chrono::steady_clock::now();
  PairsResult result;
  // Watched from here: a hang, a lost rank or an error on one rank (a record
  // rank 0 cannot open) ends the job saying why.
  watched->run([&] {
    const auto inventory = inventory_lines(world, nodes);
    const std::string run_id = shared_run_id(world);
    if (world.rank() == 0) {
      if (!flags.out.empty()) {
        if (const std::string error = record.open(flags.out, flags.overwrite); !error.empty()) throw RunError(error);
        auto header = record_header("pairs", argc, argv, world, nodes, run_id);
        name_backend(header, *backend);
        header.options = to_json(flags, options);
        record.write(header);
        for (const auto& line : inventory) record.write(line);
        watched->arm([&record](const Summary& summary) { record.seal(summary); });
      }
      if (!flags.quiet) print_intro(*runner, labels, flags.backend);
    }
    started = std::chrono::steady_clock::now();
    result = runner->run(&observer);
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // Findings fail the job, so a Slurm acceptance step can drain the bad nodes.
  int exit_code = result.failing_count() > 0 ? kExitFailed : kExitOk;
  if (world.rank() != 0) return exit_code;
  for (const auto& line : node_lines(result, labels)) record.write(line);
  for (const auto& line : finding_lines(result, labels)) record.write(line);
  exit_code = output_failure("pairs", record.error(), exit_code);
  record.seal(summary_line(result, labels, seconds, exit_code));
  if (exit_code != kExitRunError) exit_code = output_failure("pairs", record.error(), exit_code);
  const std::string report = format_report(result, labels);
  std::fputs(report.c_str(), flags.quiet ? stderr : stdout);
  user_log().info("fabricbench pairs: {} pairs in {} rounds, {} retest rounds, {} findings, {:.1f} s{}{}",
                  result.measured.size(), result.rounds, result.retest_rounds, result.finding_count(), seconds,
                  flags.out.empty() ? "" : ", record ", flags.out);
  return exit_code;
}

}  // namespace

int pairs_main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  const Comm world = Comm::world();
  if (const int stop = same_command_everywhere(world, "pairs"); stop >= 0) return stop;
  CLI::App app{"Measure every pair of nodes in concurrent rounds, print the link matrix, find bad links and nodes. "
               "Under mpirun or srun, one rank per node (or one per GPU with --rails). To try it on one machine, "
               "take each local rank as a node: mpirun -x FABRICBENCH_RANKS_PER_NODE=1.",
               "fabricbench pairs"};
  PairsFlags flags;
  add_pairs_flags(app, flags);
  PairsOptions options;
  const int stop = parse_on_every_rank(
      world, app, argc, argv, "pairs",
      [&] { options = resolve(flags); },
      [&] { return Outputs{{{flags.out, "--out"}}, flags.overwrite}; });
  if (stop >= 0) return stop;
  setup_logging(world.rank(), verbosity(flags));
  return run_or_abort([&] { return execute(world, argc, argv, flags, options); });
}

}  // namespace fb::cli
