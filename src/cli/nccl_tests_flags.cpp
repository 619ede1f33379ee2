#include "nccl_tests_flags.hpp"

#include <fmt/format.h>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/plan.hpp"
#include "run_options.hpp"

namespace fb::cli {
namespace {

constexpr const char* kGroup = "nccl-tests flags (mapped or refused with the fabricbench way)";

struct Refused {
  const char* flags;
  std::string NcclTestsFlags::*value;
  const char* what;
  const char* instead;
};

// The meaning is from nccl-tests' README (NVIDIA/nccl-tests, "Arguments").
const Refused kRefused[] = {
    {"-N,--run_cycles", &NcclTestsFlags::run_cycles, "repeat the sweep N times", "--duration 30m repeats the sweep "
     "until the time is spent"},
    {"-J,--report_json", &NcclTestsFlags::report_json, "write results as JSON",
     "--out FILE.jsonl writes the record (JSON Lines, docs/results-schema.md)"},
    {"-F,--output_file", &NcclTestsFlags::output_file, "write results as CSV", "--csv FILE"},
    {"-m,--agg_iters", &NcclTestsFlags::agg_iters, "aggregate several ops per iteration",
     "fabricbench times one op per iteration; short ops on GPUs are timed in groups between events already"},
    {"-a,--average", &NcclTestsFlags::average, "choose how ranks' times combine",
     "the time column is the median over iterations of the slowest rank of each iteration; each row also names "
     "the slowest rank"},
    {"-p,--parallel_init", &NcclTestsFlags::parallel_init, "initialise NCCL from threads",
     "one rank per GPU, one thread each"},
    {"-z,--blocking", &NcclTestsFlags::blocking, "wait on the host after each collective",
     "iterations are timed back to back on the stream, as nccl-tests does by default"},
    {"-y,--stream_null", &NcclTestsFlags::stream_null, "use the default stream", "a stream of its own per rank"},
    {"-C,--report_cputime", &NcclTestsFlags::report_cputime, "report host time", "GPU rows are CUDA-event times"},
    {"-R,--local_register", &NcclTestsFlags::local_register, "register buffers with NCCL",
     "not supported: buffers are NCCL's defaults"},
};

}  // namespace

void add_nccl_tests_flags(CLI::App& app, NcclTestsFlags& f) {
  app.add_option("-g,--ngpus", f.ngpus, "nccl-tests: GPUs per thread; fabricbench takes 1 (one rank per GPU)")
      ->group(kGroup);
  app.add_option("-t,--nthreads", f.nthreads, "nccl-tests: threads per process; fabricbench takes 1")->group(kGroup);
  app.add_option("-G,--cudagraph", f.cudagraph, "nccl-tests: graph launches; any N > 0 means --graph")->group(kGroup);
  app.add_option("-T", f.timeout, "nccl-tests: timeout in seconds; means --timeout (which wins when both are given)")
      ->group(kGroup);
  for (const Refused& r : kRefused)
    app.add_option(r.flags, f.*(r.value), fmt::format("nccl-tests: {}; refused: {}", r.what, r.instead))
        ->group(kGroup);
}

void apply_nccl_tests_flags(const NcclTestsFlags& f, bool timeout_given, RunOptions& o) {
  if (f.ngpus != 1)
    throw UsageError(fmt::format("-g {}: fabricbench runs one rank per GPU; launch {} times the ranks (mpirun -np) "
                                 "instead of -g",
                                 f.ngpus, f.ngpus));
  if (f.nthreads != 1)
    throw UsageError(fmt::format("-t {}: fabricbench runs one thread per rank; launch more ranks instead", f.nthreads));
  if (f.cudagraph < 0) throw UsageError(fmt::format("-G {}: graph launches, 0 or more", f.cudagraph));
  if (f.cudagraph > 0) o.graph = true;
  if (!f.timeout.empty() && !timeout_given) o.timeout_s = timeout_seconds(f.timeout);
  for (const Refused& r : kRefused)
    if (!(f.*(r.value)).empty())
      throw UsageError(fmt::format("{} (nccl-tests: {}) has no fabricbench equivalent of that name: {}", r.flags,
                                   r.what, r.instead));
}

}  // namespace fb::cli
