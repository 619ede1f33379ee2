// nccl-tests' flags that `fabricbench run` has no flag of the same name for:
// each is either mapped to fabricbench's own (-G -> --graph, -T -> --timeout,
// -g 1 and -t 1 accepted) or refused with the fabricbench way named, so a
// command line copied from an nccl-tests job never silently means something
// else. Flags with the same meaning (-b -e -f -i -n -w -c -o -d -r) are
// run's own.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace fb {
struct RunOptions;
}

namespace fb::cli {

struct NcclTestsFlags {
  int ngpus = 1;         // -g: GPUs per thread
  int nthreads = 1;      // -t: threads per process
  int cudagraph = 0;     // -G: graph launches
  std::string run_cycles;      // -N
  std::string timeout;         // -T: seconds
  std::string report_json;     // -J
  std::string output_file;     // -F
  std::string agg_iters;       // -m
  std::string average;         // -a
  std::string parallel_init;   // -p
  std::string blocking;        // -z
  std::string stream_null;     // -y
  std::string report_cputime;  // -C
  std::string local_register;  // -R
};

void add_nccl_tests_flags(CLI::App& app, NcclTestsFlags& flags);

// Maps or refuses (UsageError naming the flag and fabricbench's way).
// `timeout_given`: --timeout was on the command line, which wins over -T.
void apply_nccl_tests_flags(const NcclTestsFlags& flags, bool timeout_given, RunOptions& options);

}  // namespace fb::cli
