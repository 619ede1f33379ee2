// `fabricbench diagnose`: while a training job runs, sample every GPU of each
// node (NVML), its NICs, the job's process and iteration log for a window,
// then say per GPU and per node whether the job is compute-bound, starved by
// input, communication-bound or throttled, with the figures. Alone, or under
// mpirun/srun with one rank per node (other ranks on a node only wait).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "command_support.hpp"
#include "commands.hpp"
#include "fabricbench/core/ending_signals.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/input_file.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/output_file.hpp"
#include "fabricbench/core/record.hpp"
#include "fabricbench/diagnose/iter_log.hpp"
#include "fabricbench/diagnose/report.hpp"
#include "fabricbench/diagnose/sampler.hpp"
#include "record_header.hpp"
#include "run_options.hpp"

namespace fb::cli {
namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct DiagnoseFlags {
  double seconds = 60;
  double interval_s = 0.5;
  std::string iter_log;
  std::string iter_regex;
  std::string iter_unit = "s";
  int pid = 0;
  std::string out;
  std::string samples_out;
  std::string replay;
  bool overwrite = false;
  bool quiet = false;
};

void add_flags(CLI::App& app, DiagnoseFlags& f) {
  app.add_option("--seconds", f.seconds, "sampling window while the job runs (0: read the --iter-log only)")
      ->capture_default_str();
  app.add_option("--interval", f.interval_s, "seconds between readings (NVML's utilization covers 1/6 s to 1 s)")
      ->capture_default_str();
  app.add_option("--iter-log", f.iter_log,
                 "the job's log: Megatron-LM, DeepSpeed, tqdm (Hugging Face Trainer) or iter_time=... lines");
  app.add_option("--iter-regex", f.iter_regex, "a regular expression whose first group is an iteration's time");
  app.add_option("--iter-unit", f.iter_unit, "unit of --iter-regex's number: s or ms")->capture_default_str();
  app.add_option("--pid", f.pid, "the job's process: is it running, and how many CPU cores it and its workers use");
  app.add_option("--out", f.out, "record, JSON Lines: header, inventory lines, one diagnosis line per GPU and node")
      ->check(output_path_validator());
  app.add_option("--samples-out", f.samples_out, "also write every reading, JSON (for --replay)")
      ->check(output_path_validator());
  app.add_option("--replay", f.replay, "diagnose the readings a --samples-out file holds instead of sampling (alone)");
  app.add_flag("--overwrite", f.overwrite, "replace --out and --samples-out files that exist (refused without it)");
  app.add_flag("-q,--quiet", f.quiet, "no table: the per-node verdict lines only");
}

diagnose::IterOptions iter_options(const DiagnoseFlags& f) {
  diagnose::IterOptions o;
  o.regex = f.iter_regex;
  o.regex_scale = f.iter_unit == "ms" ? 1e-3 : 1.0;
  return o;
}

void validate(const Comm& world, const DiagnoseFlags& f) {
  if (!(f.seconds >= 0 && f.seconds <= 86400))
    throw UsageError(fmt::format("--seconds {}: 0 to 86400 (a day)", f.seconds));
  if (!(f.interval_s >= 0.05 && f.interval_s <= 60))
    throw UsageError(fmt::format("--interval {}: 0.05 to 60 seconds", f.interval_s));
  if (f.iter_unit != "s" && f.iter_unit != "ms") throw UsageError(fmt::format("--iter-unit '{}': s or ms", f.iter_unit));
  if (!f.iter_regex.empty() && f.iter_log.empty()) throw UsageError("--iter-regex reads --iter-log: give the log too");
  if (f.pid < 0) throw UsageError(fmt::format("--pid {}: a process id", f.pid));
  diagnose::check_iter_options(iter_options(f));
  if (!f.replay.empty() && world.size() > 1)
    throw UsageError("--replay diagnoses a recorded file: run it alone, without mpirun");
  if (!f.replay.empty() && (f.pid > 0 || !f.iter_log.empty()))
    throw UsageError("--replay reads what the file recorded: --pid and --iter-log sample a live job");
  if (f.seconds == 0 && f.iter_log.empty() && f.replay.empty())
    throw UsageError("--seconds 0 samples nothing: give --iter-log, or a window to sample");
}

json options_json(const DiagnoseFlags& f, const diagnose::Thresholds& t) {
  json o = {{"seconds", f.seconds}, {"interval_s", f.interval_s}, {"iter_log", f.iter_log},
            {"iter_regex", f.iter_regex}, {"iter_unit", f.iter_unit}, {"pid", f.pid},
            {"replay", f.replay}, {"thresholds", diagnose::to_json(t)}};
  return o;
}

// Ctrl-C (SIGINT) ends the sampling window early and the node reports what
// it sampled; SIGTERM and SIGHUP end the process as they would uncaught.
bool interrupted(const SignalSubscription& signals) {
  const int sig = signals.take();
  if (sig != 0 && sig != SIGINT) die_of(sig);
  return sig == SIGINT;
}

// This node's readings over the window (local rank 0 of each node).
diagnose::NodeSamples sample_node(const DiagnoseFlags& f, const NodeMap& nodes, bool quiet) {
  const std::string host = host_name();
  const auto print = [&](const std::vector<std::string>& notes) {
    for (const auto& n : notes) user_log().info("fabricbench diagnose: {}: {}", host, n);
  };
  std::optional<diagnose::IterLog> log;
  if (!f.iter_log.empty()) {
    log.emplace(f.iter_log, iter_options(f));
    if (!log->error_at_start().empty()) print({log->error_at_start()});
  }
  const auto nvml = topo::load_nvml();
  const topo::Sysfs sysfs("/");
  diagnose::Sampler sampler(*nvml, sysfs, f.pid > 0 ? std::optional<int>(f.pid) : std::nullopt);
  print(sampler.new_notes());
  if (!quiet && f.seconds > 0 && nodes.node == 0)
    user_log().info("fabricbench diagnose: sampling {} node{} for {:g} s every {:g} s (Ctrl-C ends the window early)",
                    nodes.nodes, nodes.nodes == 1 ? "" : "s", f.seconds, f.interval_s);
  const auto start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  double t = 0;
  if (f.seconds > 0) {
    bool stop = false;
    const SignalSubscription signals;  // the window's own: outside it the signals act as they did
    for (int i = 0; !stop; ++i) {
      // Readings on a fixed grid, so a slow NVML call does not stretch the window.
      const double due = i * f.interval_s;
      if (due > f.seconds) break;
      while (!(stop = stop || interrupted(signals)) && elapsed() < due)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (stop) break;
      t = elapsed();
      sampler.sample(t);
      print(sampler.new_notes());
    }
    if (!stop) interrupted(signals);  // a SIGTERM in the window's last moment still ends the process
  }
  diagnose::NodeSamples node = sampler.samples();
  node.node = nodes.node;
  node.host = host;
  node.window_s = f.seconds > 0 ? t : 0;
  node.interval_s = f.interval_s;
  if (f.seconds == 0) node.gpu_reason = "not sampled: --seconds 0";
  if (log) {
    node.iterations = log->read();
    if (!node.iterations->error.empty()) {
      node.notes.push_back(node.iterations->error);
      print({node.iterations->error});
    }
  }
  return node;
}

std::vector<diagnose::NodeSamples> read_replay(const std::string& path) {
  json j;
  try {
    j = json::parse(read_input_file("--replay", path));
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("--replay {}: not JSON ({})", path, e.what()));
  }
  const auto it = j.find("nodes");
  if (!j.is_object() || it == j.end() || !it->is_array())
    throw UsageError(fmt::format("--replay {}: no \"nodes\" list; give a file --samples-out wrote", path));
  std::vector<diagnose::NodeSamples> out;
  try {
    for (const auto& n : *it) out.push_back(diagnose::node_samples_from_json(n));
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("--replay {}: {}", path, e.what()));
  }
  return out;
}

// Rank 0: the table, the record, the samples file; returns the exit code.
int report(int argc, char** argv, const Comm& world, const NodeMap& nodes, const DiagnoseFlags& f,
           const std::vector<diagnose::NodeSamples>& samples, const std::vector<InventoryLine>& inventory,
           const std::string& run_id, double seconds) {
  const diagnose::Thresholds t;
  std::vector<DiagnosisLine> lines;
  for (const auto& node : samples)
    for (auto& l : diagnose::diagnose(node, t)) lines.push_back(std::move(l));
  if (!f.quiet) std::fputs(diagnose::format_table(lines, t).c_str(), stdout);
  int code = kExitOk;
  for (const auto& l : lines) {
    const auto v = diagnose::parse_verdict(l.verdict);
    if (v && diagnose::is_problem(*v)) code = kExitFailed;
    if (l.level == "node")
      user_log().info("fabricbench diagnose: {}: {}", l.host, diagnose::words_of(l.verdict));
  }
  if (!f.samples_out.empty()) {
    json all = {{"thresholds", diagnose::to_json(t)}, {"nodes", json::array()}};
    for (const auto& node : samples) all["nodes"].push_back(diagnose::to_json(node));
    code = output_failure("diagnose", write_file_atomically(f.samples_out, all.dump(1) + "\n"), code);
  }
  if (f.out.empty()) return code;
  RecordWriter record;
  if (const auto error = record.open(f.out, f.overwrite); !error.empty()) throw RunError(error);
  RunHeader header = record_header("diagnose", argc, argv, world, nodes, run_id);
  header.options = options_json(f, t);
  record.write(header);
  for (const auto& l : inventory) record.write(l);
  for (const auto& l : lines) record.write(l);
  Summary summary;
  summary.elapsed_s = seconds;
  summary.exit_code = code;
  record.seal(summary);
  return output_failure("diagnose", record.error(), code);
}

int execute(int argc, char** argv, const Comm& world, const DiagnoseFlags& f) {
  const NodeMap nodes = map_nodes(world);
  const auto started = Clock::now();
  std::vector<InventoryLine> inventory;
  std::vector<diagnose::NodeSamples> samples;
  if (!f.replay.empty()) {
    try {
      samples = read_replay(f.replay);
    } catch (const UsageError& e) {
      return usage_exit(world, "diagnose", e.what());
    }
  } else {
    inventory = inventory_lines(world, nodes).lines;
    std::string mine;
    if (nodes.local_rank == 0) mine = diagnose::to_json(sample_node(f, nodes, f.quiet)).dump();
    for (const auto& text : world.allgather_strings(mine))
      if (!text.empty() && world.rank() == 0) samples.push_back(diagnose::node_samples_from_json(json::parse(text)));
  }
  const std::string run_id = shared_run_id(world);
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::int64_t code =
      world.rank() == 0 ? report(argc, argv, world, nodes, f, samples, inventory, run_id, seconds) : kExitOk;
  world.bcast_quiet({&code, 1}, 0);
  return static_cast<int>(code);
}

}  // namespace

int diagnose_main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  const Comm world = Comm::world();
  if (const int stop = same_command_everywhere(world, "diagnose"); stop >= 0) return stop;
  CLI::App app{"Is the GPU starved? Sample every GPU (NVML), the NICs, the job's process and iteration log while a "
               "training job runs; then say per GPU and node whether it is compute-bound, starved by input, "
               "communication-bound or throttled, with the figures. Alone or under mpirun/srun, one rank per node.",
               "fabricbench diagnose"};
  DiagnoseFlags flags;
  add_flags(app, flags);
  const int stop = parse_on_every_rank(
      world, app, argc, argv, "diagnose", [&] { validate(world, flags); },
      [&] { return Outputs{{{flags.out, "--out"}, {flags.samples_out, "--samples-out"}}, flags.overwrite}; });
  if (stop >= 0) return stop;
  setup_logging(world.rank(), flags.quiet ? Verbosity::quiet : Verbosity::normal);
  return run_or_abort([&] { return execute(argc, argv, world, flags); });
}

}  // namespace fb::cli
