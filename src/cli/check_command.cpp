// `fabricbench check`: read and agree on the profile across ranks, run its
// sweeps through the engine into one results record, then on rank 0 read the
// record back, evaluate the rules, print the verdict table and write
// check.json and junit.xml. Every rank exits with the verdict's code.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "check_options.hpp"
#include "check_pairs.hpp"
#include "check_verdict.hpp"
#include "command_support.hpp"
#include "commands.hpp"
#include "fabricbench/accept/profile.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/runner.hpp"
#include "fabricbench/core/sinks.hpp"
#include "record_header.hpp"
#include "run_options.hpp"
#include "watched_run.hpp"
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

// Parses flags and the profile on every rank; any rank's error stops all with
// one message. Returns the exit code to stop with, or -1 to go on.
int prepare_everywhere(const Comm& world, CLI::App& app, int argc, char** argv, CheckFlags& flags, CheckSetup& setup) {
  std::string error;
  refuse_nonsense_numbers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (world.rank() == 0) std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    error = e.what();
  }
  if (error.empty() && flags.list_profiles) {
    try {
      const std::string list = list_profiles();
      if (world.rank() == 0) std::fputs(list.c_str(), stdout);
      return kExitOk;
    } catch (const UsageError& e) {
      error = e.what();
    }
  }
  if (error.empty() && flags.profile.empty()) error = "--profile is required (a YAML file, or see --list-profiles)";
  if (error.empty() && flags.progress != "auto" && flags.progress != "on" && flags.progress != "off")
    error = fmt::format("--progress '{}': use auto, on or off", flags.progress);
  if (error.empty()) {
    try {
      (void)timeout_seconds(flags.timeout);
      check_injected(flags.inject);
      if (!flags.inject.empty() && !flags.save_baseline.empty())
        throw UsageError("--inject plants faults (tests only): such a run cannot be saved as a baseline; drop "
                         "--save-baseline");
    } catch (const UsageError& e) {
      error = e.what();
    }
  }
  error = agree_on_error(world, error);
  if (error.empty()) error = options_differ(world, compared_options(app));
  if (error.empty()) error = load_profile_everywhere(world, flags, setup);
  if (error.empty() && flags.results.empty() && accept::has_storage_rules(setup.profile))
    error = fmt::format(
        "profile {} has storage rules, which judge a storage record: run `fabricbench storage --path DIR --out "
        "FILE` under mpirun, then `fabricbench check --profile {} --results FILE`",
        setup.profile.name, setup.profile_path);
  // A recorded run is judged without running anything: no backend needed.
  if (error.empty() && flags.results.empty()) error = backend_problem(world, setup);
  if (error.empty() && world.rank() == 0) error = prepare_rank0(world, flags, setup);
  error = agree_on_error(world, error);
  if (error.empty()) return -1;
  return usage_exit(world, "check", error);
}

// The sweep table, the progress line and the record, on rank 0.
SinkList make_sinks(const CheckFlags& flags, const CheckOutputs& out) {
  SinkList sinks;
  if (show_progress(flags.progress) && !flags.quiet) sinks.add(make_progress_sink(stderr));
  if (!flags.quiet) sinks.add(make_table_sink(stdout));
  sinks.add(make_record_sink(out.record, flags.overwrite));
  return sinks;
}

bool any_checked(const Profile& p) {
  for (const auto& s : p.sweeps)
    if (s.options.check) return true;
  return false;
}

RunHeader check_header(const CheckSetup& setup, RunHeader header) {
  header.profile = ProfileRef{setup.profile.name, setup.profile_path, setup.profile.source};
  header.sweeps.emplace();
  for (const auto& s : setup.profile.sweeps) header.sweeps->push_back({s.name, to_json(s.options)});
  if (const auto& p = setup.profile.pairs) header.pairs = PairsPlanRef{p->size_bytes, p->iters, p->time_budget_s, p->rails};
  return header;
}

// The sweeps' totals together, as `run` closes its record.
void add_totals(RunTotals& all, const RunTotals& t) {
  all.rows += t.rows;
  all.skipped += t.skipped;
  all.wrong += t.wrong;
  all.busbw_sum_gbps += t.busbw_sum_gbps;
  all.passes += t.passes;
  if (all.wrong_by_rank.size() < t.wrong_by_rank.size()) all.wrong_by_rank.resize(t.wrong_by_rank.size(), 0);
  for (std::size_t r = 0; r < t.wrong_by_rank.size(); ++r) all.wrong_by_rank[r] += t.wrong_by_rank[r];
}

Summary check_summary(const Profile& profile, const RunTotals& totals, double seconds, int code) {
  SweepTotals::Figures f;
  const bool checked = any_checked(profile);
  f.wrong = checked ? totals.wrong : -1;
  if (checked) {
    std::vector<int> ranks;
    for (std::size_t r = 0; r < totals.wrong_by_rank.size(); ++r)
      if (totals.wrong_by_rank[r] > 0) ranks.push_back(static_cast<int>(r));
    f.wrong_ranks = ranks;
  }
  bool burn_in = false;
  for (const auto& s : profile.sweeps) burn_in = burn_in || s.options.duration_s > 0;
  if (burn_in) f.passes = totals.passes;
  f.avg_busbw_gbps = totals.rows ? totals.busbw_sum_gbps / static_cast<double>(totals.rows) : 0.0;
  Summary s;
  s.sweep = SweepTotals{totals.rows, totals.skipped, f};
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
  return fmt::format("profile {} measures between nodes only (its sweeps' scopes are inter or rail{}), and this job "
                     "runs on one node ({}): launch it on two or more nodes (mpirun --host NODE1,NODE2 ..., or srun "
                     "-N 2), or use a profile for one node such as local-smoke",
                     profile.name, pairs ? ", its pairs are across nodes" : "",
                     nodes.node_hosts.empty() ? "?" : nodes.node_hosts.front());
}

int run_and_judge(const Comm& world, int argc, char** argv, const CheckFlags& flags, const CheckSetup& setup) {
  const NodeMap nodes = map_nodes(world);
  std::unique_ptr<Backend> backend;
  try {
    backend = with_injected_faults(world, find_backend(setup.profile.backend)->make(), flags.inject, "check");
  } catch (const UsageError& e) {
    return usage_exit(world, "check", e.what());
  }
  // First of all, outputs that say the run did not finish: an earlier run's
  // PASS must not stand beside a run that ends early.
  const int ranks = world.size();
  if (world.rank() == 0) write_placeholder(setup, flags, ranks, nodes.node_hosts);
  // A refusal from here on replaces that placeholder: exit 2 and why, in check.json too.
  const auto refuse = [&](const std::string& why) {
    if (world.rank() == 0) write_refusal(setup, flags, ranks, nodes.node_hosts, why);
    return usage_exit(world, "check", why);
  };
  SinkList sinks;
  std::vector<std::unique_ptr<Runner>> runners;
  for (const auto& sweep : setup.profile.sweeps) {
    runners.push_back(std::make_unique<Runner>(world, nodes, *backend, sweep.options, &sinks));
    try {
      runners.back()->preflight();
    } catch (const UsageError& e) {
      return refuse(fmt::format("sweep {}: {}", sweep.name, e.what()));
    }
  }
  std::optional<CheckPairs> pairs;
  try {
    if (setup.profile.pairs) pairs.emplace(world, nodes, *backend, *setup.profile.pairs);
  } catch (const UsageError& e) {
    return refuse(fmt::format("pairs: {}", e.what()));
  }
  if (const auto why = needs_more_nodes(setup.profile, nodes, pairs); !why.empty()) return refuse(why);
  // The hang watchdog over every sweep and the pair matrix: a node that
  // wedges a Slurm acceptance job ends it with the record closed, naming
  // the rank, instead of holding the allocation until the time limit.
  std::unique_ptr<WatchedRun> watched;
  try {
    watched = std::make_unique<WatchedRun>(world, nodes, watch::TimeoutPolicy{timeout_seconds(flags.timeout)}, "check");
  } catch (const UsageError& e) {
    return refuse(e.what());
  }
  for (auto& runner : runners) runner->watch(&watched->board());
  if (pairs) pairs->watch(&watched->board());
  // A one-node job has no pairs: its pairs rules SKIP "no pair lines in this
  // run" (an error under --strict).
  if (world.rank() == 0 && pairs && !pairs->not_run().empty())
    spdlog::warn("profile {} asks for the pair matrix: {}", setup.profile.name, pairs->not_run());
  auto started = std::chrono::steady_clock::now();
  RunTotals totals;
  watched->run([&] {
    // What the figures are measured on (fabricbench topo's inventory), right
    // after the header as in every record: spec and uniformity rules read it.
    const auto inventory = inventory_lines(world, nodes);
    const std::string run_id = shared_run_id(world);
    started = std::chrono::steady_clock::now();
    if (world.rank() == 0) {
      sinks = make_sinks(flags, setup.outputs);
      auto header = record_header("check", argc, argv, world, nodes, run_id);
      name_backend(header, *backend);
      sinks.begin(check_header(setup, std::move(header)));
      for (const auto& line : inventory) sinks.record_line(line);
      // An early end closes the record and says why in check.json and junit.xml too.
      watched->arm([&sinks, &setup, &flags, &nodes, ranks](const Summary& summary) {
        sinks.abort(summary);
        write_placeholder(setup, flags, ranks, nodes.node_hosts, summary.reason);
      });
    }
    for (auto& runner : runners) add_totals(totals, runner->run());
    if (pairs) pairs->run(sinks);
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::int64_t code = kExitOk;
  if (world.rank() == 0) {
    const Judgement j = judge(setup, flags, setup.outputs.record, seconds, &sinks, sinks.error());
    code = j.code;
    sinks.end(check_summary(setup.profile, totals, seconds, static_cast<int>(code)));
    if (code != kExitRunError) code = output_failure("check", sinks.error(), static_cast<int>(code));
    std::fputs(j.text.c_str(), stdout);
    std::fflush(stdout);
    if (!flags.save_baseline.empty()) {
      if (auto err = copy_record(setup.outputs.record, flags.save_baseline); !err.empty()) {
        user_log().error("fabricbench check: {}", err);
        code = kExitRunError;
      }
    }
  }
  world.bcast_quiet({&code, 1}, 0);
  return static_cast<int>(code);
}

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
  MpiSession mpi(&argc, &argv);
  const Comm world = Comm::world();
  if (const int stop = same_command_everywhere(world, "check"); stop >= 0) return stop;
  CLI::App app{
      "Run an acceptance profile (YAML) and judge its rules: verdict table, check.json, junit.xml, exit "
      "code 0 pass / 1 a rule failed / 2 bad input / 3 the run did not finish.",
      "fabricbench check"};
  CheckFlags flags;
  add_check_flags(app, flags);
  CheckSetup setup;
  const int stop = prepare_everywhere(world, app, argc, argv, flags, setup);
  if (stop >= 0) return stop;
  setup_logging(world.rank(), flags.verbose ? Verbosity::verbose : flags.quiet ? Verbosity::quiet : Verbosity::normal);
  if (!flags.results.empty()) return judge_recorded(world, flags, setup);
  // check.json and junit.xml say "did not finish" until the verdict replaces them.
  return run_or_abort([&] { return run_and_judge(world, argc, argv, flags, setup); });
}

}  // namespace fb::cli
