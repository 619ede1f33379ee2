// Where no GPU is usable (CI, this development machine), the GPU backends and
// the gemm command say so and why, and the GPU-only flags are refused by the
// host backend. Skipped on GPU machines, where the gpu label covers them.
#include <gtest/gtest.h>

#include "fabricbench/backends/gpu.hpp"
#include "fabricbench/backends/registry.hpp"
#include "process.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

std::string fabricbench(const std::string& args) { return std::string(FB_BINARY) + " " + args; }

TEST(GpuAbsent, GpuBackendsSayWhyTheyCannotRun) {
  const std::string why = gpu_absent_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA device is usable here: the gpu label tests the backends";
  for (const std::string backend : {"nccl", "cuda", "mpi-cuda"}) {
    const auto r = run_process("timeout 60 " + mpirun(2) + " " + fabricbench("run --progress off --backend " + backend));
    EXPECT_EQ(r.exit_code, 2) << backend << ": " << r.err;
    EXPECT_NE(r.err.find("backend " + backend + " is not usable: " + why), std::string::npos)
        << r.err << "\nin this process: " << why;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const auto gemm = run_process("timeout 60 " + mpirun(1) + " " + fabricbench("gemm"));
  EXPECT_EQ(gemm.exit_code, 2) << gemm.err;
  EXPECT_NE(gemm.err.find(why), std::string::npos) << gemm.err;
}

// Flags are judged before any GPU is looked for, so these hold on every machine.
TEST(GpuAbsent, GemmBadFlagsExitTwoWithOneMessageBeforeLookingForAGpu) {
  const struct {
    std::string args;
    std::string says;
  } cases[] = {
      {"--size 3", "--size 3: 16 to 65536"},
      {"--dtype int8", "--dtype 'int8': use bf16, fp16, fp32 or fp8_e4m3"},
      {"--out /nonexistent/g.jsonl", "--out '/nonexistent/g.jsonl'"},
      {"--iters 0", "--iters 0: at least 1"},
      {"--shape 8192x8192", "--shape '8192x8192': MxNxK, each side 1 to 65536"},
      {"--shape 8x0x8", "--shape '8x0x8': MxNxK"},
      {"--shape 8x8x8 --shapes-of " + std::string(FB_SOURCE_DIR) + "/profiles/workloads/llama-7b-zero1-2x8-h100.yaml",
       "--shape and --shapes-of: give one of them"},
      {"--shapes-of /nonexistent/w.yaml", "--shapes-of: workload file '/nonexistent/w.yaml': cannot read it"}};
  for (const auto& c : cases) {
    const auto r = run_process("timeout 60 " + mpirun(2) + " " + fabricbench("gemm " + c.args));
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    const auto first = r.err.find("fabricbench gemm: " + c.says);
    EXPECT_NE(first, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("fabricbench gemm:", first + 1), std::string::npos) << "one message: " << r.err;
  }
  const auto help = run_process("timeout 60 " + mpirun(2) + " " + fabricbench("gemm --help"));
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("--dtype"), std::string::npos) << help.out;
}

TEST(GpuAbsent, HostBackendRefusesGpuFlags) {
  for (const std::string flag : {"--graph", "--device 0"}) {
    const auto r = run_process("timeout 60 " + mpirun(2) + " " + fabricbench("run --progress off -e 1K " + flag));
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
    EXPECT_NE(r.err.find(flag.substr(0, flag.find(' ')) + ": the mpi backend"), std::string::npos) << r.err;
  }
}

TEST(GpuAbsent, HostBackendRefusesCopyPaths) {
  const auto r = run_process("timeout 60 " + mpirun(2) + " " + fabricbench("run --progress off --ops copy_d2d_ce"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--backend cuda"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fb
