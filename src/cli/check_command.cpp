// `fabricbench check`: read and agree on the profile across ranks, run its
// sweeps through the engine into one results record, then on rank 0 read the
// record back, evaluate the rules, print the verdict table and write
// check.json and junit.xml. Every rank exits with the verdict's code.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "check_options.hpp"
#include "check_pairs.hpp"
#include "check_quote.hpp"
#include "check_verdict.hpp"
#include "command_support.hpp"
#include "commands.hpp"
#include "fabricbench/accept/profile.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabric_health.hpp"
#include "fabricbench/core/sinks.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "measuring_command.hpp"
#include "number_flags.hpp"

namespace fb::cli {
namespace {

using accept::Profile;

std::string read_text(const std::string& path, std::string& text) {
  try {
    text = read_input_file("--profile", path, {.max_bytes = accept::kMaxProfileBytes});
  } catch (const UsageError& e) {
    return fmt::format("{}{}", e.what(), path.find('/') == std::string::npos ? " (see --list-profiles)" : "");
  }
  return {};
}

// Rank 0 reads the profile and hands its text to every rank, so ranks on
// nodes without the file (no shared folder) parse the same profile.
std::string load_profile_everywhere(const Comm& world, const CheckFlags& flags, CheckSetup& setup) {
  std::string text;
  std::string error;
  setup.profile_path = profile_path(flags.profile);
  if (world.rank() == 0) error = read_text(setup.profile_path, text);
  if (!(error = agree_on_error(world, error)).empty()) return error;
  text = world.bcast_string_quiet(text, 0);
  try {
    setup.profile = accept::parse_profile(text, setup.profile_path);
  } catch (const UsageError& e) {
    return e.what();
  }
  if (!flags.backend.empty()) accept::set_backend(setup.profile, flags.backend);
  return {};
}

// Rank 0: the baseline is readable and fits this job; the outputs can be written.
std::string prepare_rank0(const Comm& world, const CheckFlags& flags, CheckSetup& setup) {
  // Only rank 0 judges, so only it needs the quote's rules (and its files).
  if (!flags.quote.empty()) try {
      add_quote_rules(flags.quote, flags.quote_name, setup.profile);
    } catch (const UsageError& e) {
      return fmt::format("--quote {}: {}", flags.quote, e.what());
    }
  if (accept::needs_baseline(setup.profile) && flags.baseline.empty())
    return fmt::format(
        "profile {} has baseline rules: give --baseline FILE (a record saved earlier with "
        "--save-baseline)",
        setup.profile.name);
  if (!flags.baseline.empty()) {
    try {
      setup.baseline = read_results(flags.baseline);
      refuse_simulated(*setup.baseline, flags.baseline);
    } catch (const std::exception& e) {
      return fmt::format("--baseline: {}", e.what());
    }
    const int ranks = header_ranks(*setup.baseline);
    if (flags.results.empty() && ranks != world.size())
      return fmt::format(
          "--baseline '{}' was recorded with {} ranks and this job has {}: compare like with like, "
          "or save a new baseline with --save-baseline",
          flags.baseline, ranks, world.size());
  }
  setup.outputs = check_outputs(flags, setup.profile.name);
  return prepare_outputs(setup.outputs, flags);
}

// The backend the profile names must be in this build and usable here.
std::string backend_problem(const Comm& world, const CheckSetup& setup) {
  const BackendInfo* info = find_backend(setup.profile.backend);
  if (!info)
    return fmt::format(
        "profile {} runs on backend {}, which this build does not have (it has: {}); build with "
        "it, or try --backend",
        setup.profile.name, setup.profile.backend, backend_names());
  const std::string absent = agree_on_error(world, info->absent_reason());
  return absent.empty() ? absent
                        : fmt::format("profile {} runs on backend {}, which is not usable here: {}", setup.profile.name,
                                      info->name, absent);
}

// The flags alone, on every rank (agree_on_flags agrees on the result).
void validate(const CheckFlags& flags) {
  if (flags.list_profiles) throw ShowAndExit{list_profiles()};
  if (flags.profile.empty()) throw UsageError("--profile is required (a YAML file, or see --list-profiles)");
  if (!flags.quote_name.empty() && flags.quote.empty())
    throw UsageError("--quote-name names a quote of a --quote file: give --quote FILE too");
  if (flags.progress != "auto" && flags.progress != "on" && flags.progress != "off")
    throw UsageError(fmt::format("--progress '{}': use auto, on or off", flags.progress));
  (void)timeout_seconds(flags.timeout);
  check_injected(flags.inject);
  if (!flags.inject.empty() && !flags.save_baseline.empty())
    throw UsageError(
        "--inject plants faults (tests only): such a run cannot be saved as a baseline; drop "
        "--save-baseline");
}

// Collective, once the flags are agreed: the profile on every rank, the
// baseline and the outputs on rank 0. "" or the error, on every rank.
std::string prepare_everywhere(const Comm& world, const CheckFlags& flags, CheckSetup& setup) {
  std::string error = load_profile_everywhere(world, flags, setup);
  if (error.empty() && flags.results.empty() && accept::has_storage_rules(setup.profile))
    error = fmt::format(
        "profile {} has storage rules, which judge a storage record: run `fabricbench storage --path DIR --out "
        "FILE` under mpirun, then `fabricbench check --profile {} --results FILE`",
        setup.profile.name, setup.profile_path);
  // A recorded run is judged without running anything: no backend needed.
  if (error.empty() && flags.results.empty()) error = backend_problem(world, setup);
  if (error.empty() && world.rank() == 0) error = prepare_rank0(world, flags, setup);
  return agree_on_error(world, error);
}

RunHeader check_header(const CheckSetup& setup, RunHeader header) {
  header.profile = ProfileRef{setup.profile.name, setup.profile_path, setup.profile.source};
  header.sweeps.emplace();
  for (const auto& s : setup.profile.sweeps) header.sweeps->push_back({s.name, to_json(s.options)});
  if (const auto& p = setup.profile.pairs) header.pairs = PairsPlanRef{p->size_bytes, p->iters, p->time_budget_s, p->rails};
  return header;
}

Summary check_summary(const Profile& profile, const RunTotals& totals, double seconds, int code) {
  bool checked = false;
  bool burn_in = false;
  for (const auto& s : profile.sweeps) {
    checked = checked || s.options.check;
    burn_in = burn_in || s.options.duration_s > 0;
  }
  Summary s;
  s.sweep = totals.closing(checked, burn_in);
  s.elapsed_s = seconds;
  s.exit_code = code;
  return s;
}

// "" when this job can measure something the profile asks for; else why not.
// A profile made for several nodes (host-tcp: the inter scope and the node
// pairs) on one node would measure nothing and fail every rule "not judged":
// that is a launch to change (exit 2), not a cluster that failed (exit 1).
std::string needs_more_nodes(const Profile& profile, const NodeMap& nodes, const std::optional<CheckPairs>& pairs) {
  if (nodes.nodes > 1) return "";
  for (const auto& sweep : profile.sweeps)
    for (Scope s : sweep.options.scopes)
      if (s == Scope::global || s == Scope::intra) return "";
  if (pairs && pairs->not_run().empty()) return "";
  if (profile.sweeps.empty() && !pairs) return "";
  return fmt::format(
      "profile {} measures between nodes only (its sweeps' scopes are inter, rail or domain{}), and this job "
      "runs on one node ({}): launch it on two or more nodes (mpirun --host NODE1,NODE2 ..., or srun "
      "-N 2), or use a profile for one node such as local-smoke",
      profile.name, pairs ? ", its pairs are across nodes" : "",
      nodes.node_hosts.empty() ? "?" : nodes.node_hosts.front());
}

// check's own part of the measuring sequence (measuring_command.hpp): the
// profile's sweeps and pair matrix, then the rules judged on the record, and
// check.json and junit.xml kept saying how the run stands at every point.
class CheckCommand final : public Measuring {
 public:
  CheckCommand(const CheckFlags& flags, const CheckSetup& setup) : flags_(flags), setup_(setup) {}
  void prepare() override {
    const Comm& world = job().world;
    const NodeMap& nodes = job().nodes;
    // First of all, outputs that say the run did not finish: an earlier run's
    // PASS must not stand beside a run that ends early.
    if (world.rank() == 0) write_placeholder(setup_, flags_, world.size(), nodes.node_hosts);
    for (const auto& sweep : setup_.profile.sweeps) {
      runners_.push_back(std::make_unique<Runner>(world, nodes, *job().backend, sweep.options, &job().sinks));
      try {
        runners_.back()->preflight();
      } catch (const UsageError& e) {
        throw UsageError(fmt::format("sweep {}: {}", sweep.name, e.what()));
      }
    }
    try {
      if (setup_.profile.pairs) pairs_.emplace(world, nodes, *job().backend, *setup_.profile.pairs);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("pairs: {}", e.what()));
    }
    if (const auto why = needs_more_nodes(setup_.profile, nodes, pairs_); !why.empty()) throw UsageError(why);
    counters_ = make_node_counters(nodes, flags_.counters);
    for (auto& runner : runners_) runner->count_errors(counters_.get());
    if (pairs_) pairs_->count_errors(counters_.get());
  }
  // A refusal from here on replaces the placeholder: exit 2 and why, in check.json too.
  void refused(const std::string& why) override {
    if (job().world.rank() == 0) write_refusal(setup_, flags_, job().world.size(), job().nodes.node_hosts, why);
  }
  void watch(ProgressBoard& board) override {
    for (auto& runner : runners_) runner->watch(&board);
    if (pairs_) pairs_->watch(&board);
  }
  void open(RunHeader& header) override {
    // A one-node job has no pairs: its pairs rules SKIP "no pair lines in this
    // run" (an error under --strict).
    if (pairs_ && !pairs_->not_run().empty())
      spdlog::warn("profile {} asks for the pair matrix: {}", setup_.profile.name, pairs_->not_run());
    if (show_progress(flags_.progress) && !flags_.quiet) job().sinks.add(make_progress_sink(stderr));
    if (!flags_.quiet) job().sinks.add(make_table_sink(stdout));
    job().sinks.add(make_fabric_health_sink(stderr, "fabricbench check"));
    header.counters = flags_.counters;
    header = check_header(setup_, std::move(header));
  }
  void measure() override {
    for (auto& runner : runners_) {
      runner->nvlink_domains(job().rank_domains);
      totals_ += runner->run();
    }
    if (pairs_) pairs_->run(job().sinks);
  }
  Summary close(double seconds) override {
    SinkList& sinks = job().sinks;
    judgement_ = judge(setup_, flags_, setup_.outputs.record, seconds, &sinks, sinks.error());
    return check_summary(setup_.profile, totals_, seconds, judgement_.code);
  }
  int report(int code) override {
    std::fputs(judgement_.text.c_str(), stdout);
    std::fflush(stdout);
    if (flags_.save_baseline.empty()) return code;
    if (auto err = copy_record(setup_.outputs.record, flags_.save_baseline); !err.empty()) {
      user_log().error("fabricbench check: {}", err);
      return kExitRunError;
    }
    return code;
  }
  // An early end says why in check.json and junit.xml too.
  void ended_early(const Summary& summary) noexcept override {
    write_placeholder(setup_, flags_, job().world.size(), job().nodes.node_hosts, summary.reason);
  }

 private:
  const CheckFlags& flags_;
  const CheckSetup& setup_;
  std::vector<std::unique_ptr<Runner>> runners_;
  std::unique_ptr<RowCounters> counters_;  // read around every sweep's rows
  std::optional<CheckPairs> pairs_;
  RunTotals totals_;
  Judgement judgement_;
};

// --results FILE: judge a recorded run; no sweep runs.
int judge_recorded(const Comm& world, const CheckFlags& flags, const CheckSetup& setup) {
  std::int64_t code = kExitOk;
  if (world.rank() == 0) {
    const Judgement j = judge(setup, flags, flags.results, 0, nullptr);
    std::fputs(j.text.c_str(), stdout);
    std::fflush(stdout);
    code = j.code;
    if (code != kExitUsage && !flags.save_baseline.empty()) {
      if (auto err = copy_record(flags.results, flags.save_baseline); !err.empty()) {
        user_log().error("fabricbench check: {}", err);
        code = kExitUsage;
      }
    }
  }
  world.bcast_quiet({&code, 1}, 0);
  return static_cast<int>(code);
}

}  // namespace

int check_main(int argc, char** argv) {
  CLI::App app{
      "Run an acceptance profile (YAML) and judge its rules: verdict table, check.json, junit.xml, exit "
      "code 0 pass / 1 a rule failed / 2 bad input / 3 the run did not finish.",
      "fabricbench check"};
  CheckFlags flags;
  add_check_flags(app, flags);
  // The outputs' paths follow the profile's name: prepare_rank0 checks them once it is read.
  const CommandEntry entry{
      "check",
      app,
      [&] { validate(flags); },
      [] { return Outputs{}; },
      [&] { return flags.verbose ? Verbosity::verbose
                   : flags.quiet ? Verbosity::quiet
                                 : Verbosity::normal; },
      {},
      watchdog_runs(flags.timeout)};
  return command_main(&argc, &argv, entry, [&](const Comm& world) {
    CheckSetup setup;
    if (const std::string error = prepare_everywhere(world, flags, setup); !error.empty())
      return usage_exit(world, "check", error);
    if (!flags.results.empty()) return judge_recorded(world, flags, setup);
    // check.json and junit.xml say "did not finish" until the verdict replaces them.
    CheckCommand command(flags, setup);
    return measure(world, argc, argv,
                   {.command = "check",
                    .backend = setup.profile.backend,
                    .inject = flags.inject,
                    .timeout = watch::TimeoutPolicy{timeout_seconds(flags.timeout)},
                    .record = setup.outputs.record,
                    .overwrite = flags.overwrite,
                    .totals = ClosingTotals::sweep},
                   command);
  });
}

}  // namespace fb::cli
