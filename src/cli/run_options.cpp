#include "run_options.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "command_support.hpp"
#include "fabric_health.hpp"
#include "fabricbench/backends/registry.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/watch_report.hpp"
#include "fabricbench/backends/fault.hpp"
#include "fabricbench/core/log.hpp"

namespace fb::cli {

void add_run_flags(CLI::App& app, RunFlags& f) {
  app.add_option("-b,--minbytes", f.minbytes, "smallest size (8, 1K, 64M, 8G)")->capture_default_str();
  app.add_option("-e,--maxbytes", f.maxbytes, "largest size")->capture_default_str();
  app.add_option("-f,--stepfactor", f.stepfactor, "multiply the size by this each step")
      ->capture_default_str()
      ->each([&f](const std::string&) { f.stepfactor_given = true; });
  app.add_option("-i,--stepbytes", f.stepbytes, "add this to the size each step (instead of -f)");
  app.add_option("-n,--iters", f.iters,
                 fmt::format("timed iterations per size: the minimum (exactly this many with --median-ci 0); when "
                             "not given, a cap (bytes, time) may end a size after {}",
                             kMinCappedIters))
      ->capture_default_str()
      ->each([&f](const std::string&) { f.iters_given = true; });
  app.add_option("-w,--warmup_iters", f.warmup, "warm-up iterations per size")->capture_default_str();
  app.add_option("-c,--check", f.check,
                 "verify every output element: 0, 1 (-c alone: one verified iteration after the timed ones) or all "
                 "(every timed iteration, for burn-in)")
      ->expected(0, 1);
  app.add_option("-o,--op", f.redop, "reduction: sum, prod, max, min, avg")->capture_default_str();
  app.add_option("-d,--datatype", f.datatype, "datatype: " + allowed_dtypes())->capture_default_str();
  app.add_option("-r,--root", f.root, "root rank of broadcast and reduce")->capture_default_str();
  app.add_option("--ops", f.ops, "ops to run, comma-separated: " + allowed_ops() + " (default: the six collectives)")
      ->delimiter(',');
  app.add_option("--backend", f.backend, "data plane: " + backend_names())->capture_default_str();
  app.add_option("--scope", f.scopes, "scopes, comma-separated: " + allowed_scopes())->delimiter(',')
      ->capture_default_str();
  app.add_option(
         "--median-ci", f.median_ci,
         fmt::format(
             "stop a size once the 95% confidence interval of its median is within +- this fraction "
             "of it, after -n iterations and before {} timings (iterations, or groups of short ones), {} MiB moved "
             "or {} s spent (--time-budget) "
             "(0 = exactly -n iterations)",
             kMaxAdaptiveSamples, kMaxBytesPerSize >> 20, kDefaultSizeSeconds))
      ->capture_default_str();
  app.add_option("--time-budget", f.time_budget,
                 "seconds per measurement, warm-up included: no more iterations once spent, though never fewer than "
                 "-n (0 = the adaptive stop's own 0.25 s)")
      ->capture_default_str();
  app.add_option("--placement", f.placement,
                 "one (out-of-place, in-place for an op that has only that, as MPI_Bcast), both, out "
                 "(out-of-place only) or in (in-place only) (default: one on mpi and mpi-cuda, as IMB and OSU "
                 "measure; both on the GPU backends, as nccl-tests does)");
  app.add_option("--peers", f.peers, "point-to-point ops: the two ranks, e.g. 0,1")->delimiter(',')->expected(2);
  app.add_option("--window", f.window, "messages in flight per unidir/bidir iteration")->capture_default_str();
  app.add_option("--device", f.device,
                 "GPU backends: the CUDA device every rank uses (default: the rank's index on its node)");
  app.add_flag("--graph", f.graph,
               "GPU backends: capture each batch of timed iterations in a CUDA graph and replay it (times are "
               "per-batch means)");
  app.add_option("--out", f.out, "results record, JSON Lines (see docs/results-schema.md)")
      ->check(output_path_validator());
  app.add_option("--csv", f.csv, "also write the rows as CSV")->check(output_path_validator());
  app.add_flag("--overwrite", f.overwrite, "replace --out and --csv files that exist (refused without it)");
  app.add_flag("-q,--quiet", f.quiet, "no table: warnings, errors and the closing summary only");
  app.add_flag("-v,--verbose", f.verbose, "debug logging from every rank");
  app.add_option("--progress", f.progress, "progress line on stderr: auto, on, off")->capture_default_str();
  add_counters_option(app, f.counters);
  app.add_option("--duration", f.duration,
                 "burn-in: repeat the sweep until this much time is spent (90s, 30m, 2h); with --check all every "
                 "timed iteration is verified");
  add_timeout_option(app, f.timeout)->each([&f](const std::string&) { f.timeout_given = true; });
  add_inject_option(app, f.inject);
  add_nccl_tests_flags(app, f.nccl_tests);
}

namespace {

template <typename T, typename Parse>
T parse_named(const std::string& text, Parse parse, const char* flag, const std::string& allowed) {
  const auto v = parse(text);
  if (!v) throw UsageError(fmt::format("{} '{}': unknown; allowed: {}", flag, text, allowed));
  return *v;
}

// An op or scope named twice would be measured twice, each row a duplicate
// of the other in the record: refuse it, naming the repeat.
void refuse_repeats(const std::vector<std::string>& names, const char* flag) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i))
      throw UsageError(fmt::format("{} '{}': named twice; name each once", flag, names[i]));
}

std::vector<Scope> resolve_scopes(const std::vector<std::string>& names) {
  refuse_repeats(names, "--scope");
  std::vector<Scope> out;
  for (const auto& n : names) {
    if (n == "all") {
      out.assign(all_scopes().begin(), all_scopes().end());
      return out;
    }
    out.push_back(parse_named<Scope>(n, parse_scope, "--scope", allowed_scopes()));
  }
  return out;
}

}  // namespace

RunOptions resolve(const RunFlags& f) {
  RunOptions o;
  o.grid.min_bytes = parse_bytes(f.minbytes, "--minbytes");
  o.grid.max_bytes = parse_bytes(f.maxbytes, "--maxbytes");
  o.grid.step_factor = f.stepfactor;
  if (!f.stepbytes.empty()) {
    if (f.stepfactor_given)
      throw UsageError(fmt::format("--stepbytes {} and --stepfactor {:g} together: a sweep steps one way; give -i "
                                   "for additive steps or -f for multiplicative ones",
                                   f.stepbytes, f.stepfactor));
    o.grid.step_bytes = parse_bytes(f.stepbytes, "--stepbytes");
    if (o.grid.step_bytes == 0) throw UsageError("--stepbytes 0: the step must be at least 1 byte");
  }
  expand(o.grid);  // validates the grid now, with the flags' names in the message

  check_iteration_counts(f.iters, f.warmup);
  o.iters = f.iters;
  // The default -n gives way to the caps from kMinCappedIters on; a given one never does.
  o.cap_min_iters = f.iters_given ? 0 : kMinCappedIters;
  o.warmup = f.warmup;
  if (f.check == "" || f.check == "1" || f.check == "all") {
    o.check = true;
    o.check_every = f.check == "all";
  } else if (f.check != "0") {
    throw UsageError(fmt::format("--check '{}': use 0, 1 or all", f.check));
  }
  o.redop = parse_named<RedOp>(f.redop, parse_redop, "--op", allowed_redops());
  o.dtype = parse_named<Dtype>(f.datatype, parse_dtype, "--datatype", allowed_dtypes());
  if (f.root < 0) throw UsageError(fmt::format("--root {}: must be a rank, 0 or more", f.root));
  o.root = f.root;
  const BackendInfo* backend = find_backend(f.backend);
  if (!backend) throw UsageError(fmt::format("--backend '{}': unknown; this build has: {}", f.backend, backend_names()));
  o.backend = f.backend;
  if (!f.ops.empty()) {
    o.ops.clear();
    refuse_repeats(f.ops, "--ops");
    for (const auto& op : f.ops) o.ops.push_back(parse_named<Op>(op, parse_op, "--ops", allowed_ops()));
  } else if (!backend->default_ops.empty()) {
    o.ops.assign(backend->default_ops.begin(), backend->default_ops.end());
  }
  if (f.device < -1) throw UsageError(fmt::format("--device {}: a CUDA device index, 0 or more", f.device));
  o.device = f.device;
  o.graph = f.graph;
  if (f.scopes.empty()) throw UsageError("--scope: give at least one of " + allowed_scopes());
  o.scopes = resolve_scopes(f.scopes);
  // !(x >= 0) also catches nan, which every comparison would let through.
  if (!(f.time_budget >= 0) || !std::isfinite(f.time_budget))
    throw UsageError(fmt::format("--time-budget {}: seconds, 0 or more (0 = the adaptive stop's own 0.25 s cap)", f.time_budget));
  o.time_budget_s = f.time_budget;
  if (!(f.median_ci >= 0 && f.median_ci < 1))
    throw UsageError(fmt::format("--median-ci {}: a fraction from 0 to below 1, e.g. 0.02 for +-2% (0 = exactly -n "
                                 "iterations)",
                                 f.median_ci));
  o.median_ci = f.median_ci;
  if (!set_placement(f.placement.empty() ? backend->default_placement : std::string_view(f.placement), o))
    throw UsageError(fmt::format("--placement '{}': use one, both, out or in", f.placement));
  if (f.peers.size() != 2 || f.peers[0] < 0 || f.peers[1] < 0 || f.peers[0] == f.peers[1])
    throw UsageError("--peers: two different ranks, e.g. --peers 0,1");
  o.peer_a = f.peers[0];
  o.peer_b = f.peers[1];
  if (f.window < 1 || f.window > 4096) throw UsageError(fmt::format("--window {}: 1 to 4096 messages", f.window));
  o.window = f.window;
  if (f.progress != "auto" && f.progress != "on" && f.progress != "off")
    throw UsageError(fmt::format("--progress '{}': use auto, on or off", f.progress));
  if (!f.duration.empty()) o.duration_s = parse_duration(f.duration, "--duration");
  o.timeout_s = timeout_seconds(f.timeout);
  apply_nccl_tests_flags(f.nccl_tests, f.timeout_given, o);
  check_injected(f.inject);
  check_corrupt_counts(f.inject, o.grid.min_bytes, o.dtype);
  o.inject = f.inject;
  return o;
}

void check_ranks_exist(const RunOptions& o, int ranks, bool peers_given) {
  if (peers_given && std::max(o.peer_a, o.peer_b) >= ranks)
    throw UsageError(fmt::format("--peers {},{}: the job has {} ranks, 0 to {}; name two ranks that exist", o.peer_a,
                                 o.peer_b, ranks, ranks - 1));
  if (o.root >= ranks)
    throw UsageError(fmt::format("--root {}: the job has {} ranks, 0 to {}; name a rank that exists", o.root, ranks,
                                 ranks - 1));
}

CLI::Option* add_timeout_option(CLI::App& app, std::string& timeout) {
  return app
      .add_option("--timeout", timeout,
                  fmt::format("watchdog: an op that makes no progress for this long is a hang (seconds, or 90s, 5m); "
                              "auto = {:g} s + 1 s per GB one iteration moves; 0 = no watchdog, and MPI at "
                              "MPI_THREAD_SINGLE unless the command runs a thread of its own (storage)",
                              watch::kTimeoutFloorS))
      ->capture_default_str();
}

CLI::Validator output_path_validator() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        return path.empty() ? "an empty path; give a file name (or leave the flag out to write nothing)" : "";
      },
      "PATH");
}

void add_inject_option(CLI::App& app, std::vector<std::string>& inject) {
  app.add_option("--inject", inject, "TEST ONLY: inject a fault: " + fault::fault_syntax());
}

void check_injected(const std::vector<std::string>& inject) {
  for (std::size_t i = 0; i < inject.size(); ++i) {
    fault::parse_fault(inject[i]);  // validates; the faults are built per rank
    for (std::size_t j = 0; j < i; ++j)
      if (inject[j] == inject[i])
        throw UsageError(fmt::format("--inject '{}' is given twice; give each fault once", inject[i]));
  }
}

void check_corrupt_counts(const std::vector<std::string>& inject, std::uint64_t min_bytes, Dtype dtype) {
  for (const auto& spec : inject) {
    const fault::Fault f = fault::parse_fault(spec);
    if (f.kind != fault::Kind::corrupt) continue;
    const std::uint64_t bytes = f.bytes.value_or(min_bytes);
    const std::uint64_t elements = bytes / dtype_bytes(dtype);
    if (f.count > elements)
      throw UsageError(fmt::format("--inject '{}': count={} is more than the {} {} elements of the {} buffer it "
                                   "would corrupt; give count={} or less, or a larger bytes=",
                                   spec, f.count, elements, name(dtype), format_bytes(bytes), elements));
  }
}

std::unique_ptr<Backend> with_injected_faults(const Comm& world, std::unique_ptr<Backend> backend,
                                              const std::vector<std::string>& inject, std::string_view command) {
  if (inject.empty()) return backend;
  std::vector<fault::Fault> faults;
  for (const auto& spec : inject) {
    faults.push_back(fault::parse_fault(spec));
    if (faults.back().rank >= world.size())
      throw UsageError(fmt::format("--inject '{}': rank {} but the job has {} ranks", spec, faults.back().rank,
                                   world.size()));
  }
  if (world.rank() == 0)
    user_log().warn("fabricbench {}: --inject is for tests only: injecting {} fault(s); the record says so", command,
                    faults.size());
  return fault::with_faults(std::move(backend), std::move(faults), world.rank());
}

std::function<bool()> watchdog_runs(const std::string& timeout) {
  return [&timeout] { return timeout_seconds(timeout) != 0; };
}

double timeout_seconds(const std::string& timeout) {
  if (timeout == "0" || timeout == "0s" || timeout == "off") return 0;
  if (timeout == "auto") return -1;
  double s = 0;
  try {
    s = parse_duration(timeout, "--timeout");
  } catch (const UsageError&) {
    throw UsageError(fmt::format("--timeout '{}': a time above 0 (90, 90s, 5m), auto (the default: {:g} s + 1 s "
                                 "per GB one iteration moves), or 0/off for no watchdog",
                                 timeout, watch::kTimeoutFloorS));
  }
  if (s < watch::kTimeoutMinS)
    throw UsageError(fmt::format("--timeout '{}': below {:g} s, the shortest the watchdog can tell a hang from a rank "
                                 "scheduled late; give {:g} s or more, or 0/off for no watchdog",
                                 timeout, watch::kTimeoutMinS, watch::kTimeoutMinS));
  return s;
}

double parse_duration(const std::string& text, const char* flag) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [unit, ec] = std::from_chars(text.data(), end, value);
  const std::string_view suffix(unit, static_cast<std::size_t>(end - unit));
  double scale = 0;
  if (suffix.empty() || suffix == "s") scale = 1;
  else if (suffix == "m") scale = 60;
  else if (suffix == "h") scale = 3600;
  const double seconds = value * scale;
  if (ec != std::errc() || scale == 0 || !std::isfinite(seconds) || !(seconds > 0) || seconds > 1e8)
    throw UsageError(fmt::format("{} '{}': a time above 0 such as 90, 90s, 30m or 2h", flag, text));
  return seconds;
}

Verbosity verbosity(const RunFlags& f) {
  if (f.verbose) return Verbosity::verbose;
  return f.quiet ? Verbosity::quiet : Verbosity::normal;
}

namespace {

// Whether `fd` of process `pid` is a terminal, read from /proc (no access to
// the descriptor itself is needed).
bool fd_is_terminal(pid_t pid, int fd) {
  char target[256] = {};
  const std::string link = fmt::format("/proc/{}/fd/{}", pid, fd);
  const ssize_t n = ::readlink(link.c_str(), target, sizeof(target) - 1);
  if (n <= 0) return false;
  const std::string_view t(target, static_cast<std::size_t>(n));
  return t.starts_with("/dev/pts/") || t.starts_with("/dev/tty") || t == "/dev/console";
}

}  // namespace

bool show_progress(const std::string& mode) {
  if (mode != "auto") return mode == "on";
  // Batch schedulers and CI set these: their output goes to files.
  for (const char* batch : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "CI"})
    if (std::getenv(batch)) return false;
  const char* term = std::getenv("TERM");
  if (term && std::string_view(term) == "dumb") return false;
  if (!std::getenv("OMPI_COMM_WORLD_SIZE")) return isatty(STDERR_FILENO) != 0;
  // Under mpirun this rank's stdout is a pseudo-terminal and its stderr a
  // pipe whatever the user's own output is, so neither says whether a person
  // is watching: mpirun's stderr does. mpirun is this rank's parent when the
  // rank runs on mpirun's node (remote ranks' parent is orted: no line).
  // Before, a run redirected to a log file filled it with "\r\e[K" lines.
  return fd_is_terminal(getppid(), STDERR_FILENO);
}

}  // namespace fb::cli
