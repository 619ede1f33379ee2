// `fabricbench run` flags: nccl-tests' where the meaning is the same.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/backends/registry.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/core/plan.hpp"
#include "nccl_tests_flags.hpp"

namespace fb::cli {

// Raw flag values as typed; turned into RunOptions by resolve().
struct RunFlags {
  std::string minbytes = "8";
  std::string maxbytes = "64M";
  double stepfactor = 2.0;
  bool stepfactor_given = false;  // -f on the command line (refused beside -i)
  std::string stepbytes;
  int iters = 10;  // the minimum: `run` stops adaptively (--median-ci)
  bool iters_given = false;  // -n on the command line: never cut short by a cap
  int warmup = 5;
  std::string check = "0";
  std::string redop = "sum";
  std::string datatype = "float";
  int root = 0;
  std::vector<std::string> ops;
  std::string backend = "mpi";
  std::vector<std::string> scopes{"global"};
  double time_budget = 0;
  double median_ci = kDefaultMedianCi;
  std::string placement;  // "" = the backend's: default_placement()
  std::vector<int> peers{0, 1};
  int window = 64;
  int device = -1;
  bool graph = false;
  std::string out;
  std::string csv;
  bool overwrite = false;  // --out and --csv may replace existing files
  bool quiet = false;
  bool verbose = false;
  std::string progress = "auto";
  std::string counters = "/";      // --counters: where error counters are read, or off (fabric_health.hpp)
  std::string duration;            // burn-in: "30m"
  std::string timeout = "auto";    // watchdog
  std::vector<std::string> inject; // test-only faults
  bool timeout_given = false;      // --timeout on the command line (wins over nccl-tests' -T)
  NcclTestsFlags nccl_tests;       // -g -t -G -T and the refused ones
};

void add_run_flags(CLI::App& app, RunFlags& flags);

// Validates and converts. Throws UsageError naming the flag and what is allowed.
RunOptions resolve(const RunFlags& flags);
// --peers and --root name ranks of a job of `ranks` ranks (throws UsageError
// naming the flag and the job's size): a rank beyond the job was once a skip
// line, and with --ops sendrecv, which --peers does not steer, a run that
// exited 0 as if the pair had been measured. The default pair (0,1) is only
// checked when given: a one-rank run measures no pair.
void check_ranks_exist(const RunOptions& options, int ranks, bool peers_given);

Verbosity verbosity(const RunFlags& flags);

// Progress on stderr: "on", "off", or "auto" = only when a person is watching.
bool show_progress(const std::string& mode);

// "90", "90s", "1.5m", "30m", "2h" -> seconds (> 0). Throws UsageError naming `flag`.
double parse_duration(const std::string& text, const char* flag);

// --timeout of every measuring command (run, pairs, check, step): the hang
// watchdog's limit. "auto" -> -1 (scaled to what an iteration moves), "0" or
// "off" -> 0 (no watchdog), else a duration. Throws UsageError.
CLI::Option* add_timeout_option(CLI::App& app, std::string& timeout);

// For --out, --csv, --out-dir ...: refuses an empty path at parse time, where
// "" would otherwise mean "not asked for" and silently write nothing.
CLI::Validator output_path_validator();
double timeout_seconds(const std::string& timeout);
// CommandEntry::watchdog: whether `timeout` (read when called) leaves it on.
std::function<bool()> watchdog_runs(const std::string& timeout);

// --inject (test only) of every measuring command: faults planted in the
// backend (src/backends/fault). check_injected validates the specs; with
// them, with_injected_faults wraps the backend in the injector on every rank
// (UsageError alike on every rank for a rank the job does not have).
void add_inject_option(CLI::App& app, std::vector<std::string>& inject);
void check_injected(const std::vector<std::string>& inject);
// A corrupt fault's count must fit the smallest buffer it strikes (its bytes=, else -b).
void check_corrupt_counts(const std::vector<std::string>& inject, std::uint64_t min_bytes, Dtype dtype);
std::unique_ptr<Backend> with_injected_faults(const Comm& world, std::unique_ptr<Backend> backend,
                                              const std::vector<std::string>& inject, std::string_view command);

}  // namespace fb::cli
