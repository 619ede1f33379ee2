// `fabricbench run` flags: nccl-tests' where the meaning is the same.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "fabricbench/core/log.hpp"
#include "fabricbench/core/plan.hpp"

namespace fb::cli {

// Raw flag values as typed; turned into RunOptions by resolve().
struct RunFlags {
  std::string minbytes = "8";
  std::string maxbytes = "64M";
  double stepfactor = 2.0;
  std::string stepbytes;
  int iters = 20;
  int warmup = 5;
  std::string check = "0";
  std::string redop = "sum";
  std::string datatype = "float";
  int root = 0;
  std::vector<std::string> ops;
  std::string backend = "mpi";
  std::vector<std::string> scopes{"global"};
  double time_budget = 0;
  std::string placement = "both";
  std::vector<int> peers{0, 1};
  int window = 64;
  int device = -1;
  bool graph = false;
  std::string out;
  std::string csv;
  bool quiet = false;
  bool verbose = false;
  std::string progress = "auto";
  std::string duration;            // burn-in: "30m"
  std::string timeout = "auto";    // watchdog
  std::vector<std::string> inject; // test-only faults
};

void add_run_flags(CLI::App& app, RunFlags& flags);

// Validates and converts. Throws UsageError naming the flag and what is allowed.
RunOptions resolve(const RunFlags& flags);

Verbosity verbosity(const RunFlags& flags);

// Progress on stderr: "on", "off", or "auto" = only when a person is watching.
bool show_progress(const std::string& mode);

// "90", "90s", "1.5m", "30m", "2h" -> seconds (> 0). Throws UsageError naming `flag`.
double parse_duration(const std::string& text, const char* flag);

}  // namespace fb::cli
