// `fabricbench pairs`: parse and agree on the options, pick the nodes, hand
// them to the pairs engine; on rank 0 stream `pair` lines into the record as
// rounds finish, then print the matrices and findings and close the record.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "command_support.hpp"
#include "commands.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/pairs_report.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/core/sizes.hpp"
#include "pairs_options.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "fabric_health.hpp"
#include "measuring_command.hpp"
#include "fabricbench/core/log.hpp"

namespace fb::cli {
namespace {

// Rank 0: every finished pair goes into the record at once, synced per round,
// so a crash keeps every finished round.
class RecordObserver final : public PairsObserver {
 public:
  RecordObserver(RowSink& record, const PairsLabels& labels, bool progress)
      : record_(record), labels_(labels), progress_(progress) {}
  void pair(const PairMeasurement& m) override { record_.record_line(pair_line(m, labels_)); }
  void round_done(int done, int total, bool retest) override {
    record_.size_done();
    if (progress_) user_log().info("fabricbench pairs: {} {}/{} done", retest ? "retest round" : "round", done, total);
  }
  void counter(const CounterLine& line) override { record_.record_line(line); }

 private:
  RowSink& record_;
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

// pairs' own part of the measuring sequence (measuring_command.hpp): the
// nodes and the rounds, the matrices and findings.
class PairsCommand final : public Measuring {
 public:
  PairsCommand(const PairsFlags& flags, PairsOptions options) : flags_(flags), options_(std::move(options)) {}
  void prepare() override {
    // Every rank holds the same host list, so every rank reaches the same verdict.
    if (!flags_.nodes.empty()) options_.nodes = select_nodes(flags_.nodes, job().nodes.node_hosts);
    runner_.emplace(job().world, job().nodes, *job().backend, options_);
    runner_->preflight();
    labels_ = make_labels(runner_->selection(), job().nodes, options_);
    counters_ = make_node_counters(job().nodes, flags_.counters);
    runner_->count_errors(counters_.get());
  }
  void watch(ProgressBoard& board) override { runner_->watch(&board); }
  void open(RunHeader& header) override {
    header.options = to_json(flags_, options_);
    header.counters = flags_.counters;
    job().sinks.add(make_fabric_health_sink(stderr, "fabricbench pairs"));
    if (!flags_.quiet) print_intro(*runner_, labels_, flags_.backend);
  }
  void measure() override {
    RecordObserver observer(job().sinks, labels_, show_progress(flags_.progress) && !flags_.quiet);
    result_ = runner_->run(&observer);
  }
  Summary close(double seconds) override {
    seconds_ = seconds;
    for (const auto& line : node_lines(result_, labels_)) job().sinks.record_line(line);
    for (const auto& line : finding_lines(result_, labels_)) job().sinks.record_line(line);
    // Findings fail the job, so a Slurm acceptance step can drain the bad nodes.
    return summary_line(result_, labels_, seconds, result_.failing_count() > 0 ? kExitFailed : kExitOk);
  }
  int report(int code) override {
    const std::string report = format_report(result_, labels_);
    std::fputs(report.c_str(), flags_.quiet ? stderr : stdout);
    user_log().info("fabricbench pairs: {} pairs in {} rounds, {} retest rounds, {} findings, {:.1f} s{}{}",
                    result_.measured.size(), result_.rounds, result_.retest_rounds, result_.finding_count(), seconds_,
                    flags_.out.empty() ? "" : ", record ", flags_.out);
    return code;
  }

 private:
  const PairsFlags& flags_;
  PairsOptions options_;
  std::optional<PairsRunner> runner_;
  std::unique_ptr<RowCounters> counters_;  // read around every round
  PairsLabels labels_;
  PairsResult result_;
  double seconds_ = 0;
};

}  // namespace

int pairs_main(int argc, char** argv) {
  CLI::App app{"Measure every pair of nodes in concurrent rounds, print the link matrix, find bad links and nodes. "
               "Under mpirun or srun, one rank per node (or one per GPU with --rails). To try it on one machine, "
               "take each local rank as a node: mpirun -x FABRICBENCH_RANKS_PER_NODE=1.",
               "fabricbench pairs"};
  PairsFlags flags;
  add_pairs_flags(app, flags);
  PairsOptions options;
  const auto outputs = [&] { return Outputs{{{flags.out, "--out"}}, flags.overwrite}; };
  const CommandEntry entry{"pairs",
                           app,
                           [&] { options = resolve(flags); },
                           outputs,
                           [&] { return verbosity(flags); },
                           {},
                           [&] { return resolve(flags).timeout_s != 0; }};
  return command_main(&argc, &argv, entry,
                      [&](const Comm& world) {
                        PairsCommand command(flags, options);
                        return measure(world, argc, argv,
                                       {.command = "pairs",
                                        .backend = flags.backend,
                                        .inject = flags.inject,
                                        .timeout = watch::TimeoutPolicy{options.timeout_s},
                                        .record = flags.out,
                                        .overwrite = flags.overwrite},
                                       command);
                      });
}

}  // namespace fb::cli
