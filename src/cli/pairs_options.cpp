#include "pairs_options.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "fabric_health.hpp"
#include "fabricbench/backends/registry.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/sizes.hpp"
#include "run_options.hpp"

namespace fb::cli {

void add_pairs_flags(CLI::App& app, PairsFlags& f) {
  app.add_option("--size", f.size, "message size of the bandwidth tests (unidir, bidir)")->capture_default_str();
  app.add_option("--latency-size", f.latency_size, "message size of the latency test (ping-pong)")
      ->capture_default_str();
  app.add_option("--window", f.window, "messages in flight per bandwidth iteration")->capture_default_str();
  app.add_option("-n,--iters", f.iters, "timed iterations per test (the minimum with --time-budget)")
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", f.warmup, "warm-up iterations per test")->capture_default_str();
  app.add_option("--time-budget", f.time_budget,
                 "seconds per test: after -n iterations, stop once the 95% confidence interval of the median is "
                 "within +-2% of it or the budget is spent (0 = exactly -n iterations)")
      ->capture_default_str();
  // No CLI11 delimiter: a Slurm host list has commas inside its brackets.
  app.add_option("--nodes", f.nodes,
                 "only these nodes: host names, Slurm host lists (gpu[01-16,20]) or node indices (0-7,12), "
                 "comma-separated: bisecting");
  app.add_flag("--rails", f.rails,
               "one pair per rail: the same local rank on both nodes, every rail at once (launch one rank per GPU); "
               "default: local rank 0 of each node");
  app.add_option("--threshold", f.threshold, "a link is low below this fraction of the reference (0 = flag nothing)")
      ->capture_default_str();
  app.add_option("--expect-gbps", f.expect_gbps,
                 "reference unidir rate in GB/s (e.g. the quoted NIC rate; bidir: twice it) instead of the median "
                 "over nodes");
  app.add_option("--backend", f.backend, "data plane: " + backend_names())->capture_default_str();
  app.add_option("--out", f.out, "results record, JSON Lines (see docs/results-schema.md)")
      ->check(output_path_validator());
  app.add_flag("--overwrite", f.overwrite, "replace the --out file when it exists (refused without it)");
  app.add_flag("-q,--quiet", f.quiet, "no matrices: warnings, errors, findings and the closing summary only");
  app.add_flag("-v,--verbose", f.verbose, "debug logging from every rank");
  app.add_option("--progress", f.progress, "a line per round on stderr: auto, on, off")->capture_default_str();
  add_counters_option(app, f.counters);
  add_timeout_option(app, f.timeout);
  add_inject_option(app, f.inject);
}

PairsOptions resolve(const PairsFlags& f) {
  PairsOptions o;
  o.bytes = parse_bytes(f.size, "--size");
  o.latency_bytes = parse_bytes(f.latency_size, "--latency-size");
  if (f.window < 1 || f.window > 4096) throw UsageError(fmt::format("--window {}: 1 to 4096 messages", f.window));
  o.window = f.window;
  check_iteration_counts(f.iters, f.warmup);
  if (f.time_budget < 0) throw UsageError(fmt::format("--time-budget {}: seconds, 0 or more", f.time_budget));
  o.timing = {f.iters, f.warmup, f.time_budget};
  o.rails = f.rails;
  if (!(f.threshold >= 0 && f.threshold < 1))
    throw UsageError(fmt::format("--threshold {}: a fraction of the reference, 0 (flag nothing) up to below 1",
                                 f.threshold));
  if (!(f.expect_gbps >= 0)) throw UsageError(fmt::format("--expect-gbps {}: GB/s, more than 0", f.expect_gbps));
  o.analysis = {f.threshold, f.expect_gbps};
  if (!find_backend(f.backend))
    throw UsageError(fmt::format("--backend '{}': unknown; this build has: {}", f.backend, backend_names()));
  if (f.progress != "auto" && f.progress != "on" && f.progress != "off")
    throw UsageError(fmt::format("--progress '{}': use auto, on or off", f.progress));
  o.timeout_s = timeout_seconds(f.timeout);
  check_injected(f.inject);
  return o;
}

JsonValue to_json(const PairsFlags& f, const PairsOptions& o) {
  return nlohmann::ordered_json{{"size_bytes", o.bytes},
                                {"latency_bytes", o.latency_bytes},
                                {"window", o.window},
                                {"iters", o.timing.iters},
                                {"warmup_iters", o.timing.warmup},
                                {"time_budget_s", o.timing.budget_s},
                                {"nodes", f.nodes},
                                {"rails", o.rails},
                                {"threshold", o.analysis.threshold},
                                {"expect_gbps", o.analysis.expect_gbps},
                                {"backend", f.backend},
                                {"timeout_s", o.timeout_s},
                                {"inject", f.inject}};
}

Verbosity verbosity(const PairsFlags& f) {
  if (f.verbose) return Verbosity::verbose;
  return f.quiet ? Verbosity::quiet : Verbosity::normal;
}

}  // namespace fb::cli
