#include <csignal>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "build_identity.hpp"
#include "commands.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/log.hpp"
#include "fabricbench/storage/reaper.hpp"
#include "fabricbench/version.hpp"

namespace fb::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"run", "sweep collectives and point-to-point ops over sizes, backends and scopes (under mpirun/srun)",
       run_main},
      {"pairs", "every node pair in N-1 concurrent rounds: link matrix, bad links and nodes (under mpirun/srun)",
       pairs_main},
      {"topo", "inventory of GPUs, NVLink, PCIe and NICs; path spec peaks; differences between nodes", topo_main},
      {"model", "what the network costs a training job: fit, step, scale, memory, quotes (alone)", model_main},
      {"report",
       "results files as one HTML page, compared per op, scope and size; nccl-tests output imported; NCCL INFO logs "
       "read for the transports used (alone)",
       report_main},
      {"gemm", "cuBLAS bf16/fp16 matrix products per GPU: achieved TFLOP/s, the slowest GPU named (under mpirun)",
       gemm_main},
      {"step", "run a workload's training step on the ranks: measured communication share, beside the model",
       step_main},
      {"check", "run an acceptance profile and judge its rules: verdict table, JUnit, JSON, exit code", check_main},
      {"storage", "shared-filesystem throughput from every node at once; does data loading keep up (under mpirun/srun)",
       storage_main},
      {"diagnose", "is the GPU starved? sample GPUs, NICs and the job's iteration times: compute-bound, starved by "
                   "input, communication-bound or throttled",
       diagnose_main},
  };
  return table;
}

}  // namespace fb::cli

namespace {

void usage(std::FILE* out) {
  std::fprintf(out, "fabricbench %s: interconnect benchmark for GPU clusters\n\nusage: fabricbench <command> [options]\n\n"
               "commands:\n", fb::kVersion);
  for (const auto& c : fb::cli::commands())
    std::fprintf(out, "  %-8.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  std::fprintf(out, "\n'fabricbench <command> --help' shows a command's options.\n");
}

// What no command caught: its message and exit code 3 (2 for bad input), the
// whole job ended (peers may wait for this rank), never std::terminate.
int run_command(const fb::cli::Command& c, int argc, char** argv) {
  int code = fb::kExitRunError;
  try {
    return c.main(argc, argv);
  } catch (const fb::UsageError& e) {
    fb::user_log().error("fabricbench {}: {}", argv[0], e.what());
    code = fb::kExitUsage;
  } catch (const std::exception& e) {
    fb::user_log().error("fabricbench {}: {}", argv[0], e.what());
  }
  return fb::end_job_after_error(code);
}

}  // namespace

int main(int argc, char** argv) {
  // A file size limit (ulimit -f) must make a write fail with EFBIG, which
  // the writers report naming the file, not kill the rank with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? fb::kExitUsage : fb::kExitOk;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::fputs(fb::cli::version_text().c_str(), stdout);
    return fb::kExitOk;
  }
  // Not a command for people: storage's cleanup process (storage/reaper.hpp).
  if (std::strcmp(argv[1], fb::storage::kReaperCommand) == 0) return fb::storage::reaper_main(argc - 1, argv + 1);
  const std::string_view wanted = argv[1];
  for (const auto& c : fb::cli::commands())
    if (c.name == wanted) return run_command(c, argc - 1, argv + 1);
  fb::user_log().error("fabricbench: unknown command '{}'\n", argv[1]);  // a blank line before the usage
  usage(stderr);
  return fb::kExitUsage;
}
