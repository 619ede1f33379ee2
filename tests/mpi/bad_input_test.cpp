// Bad input that used to crash, hang or exit 3, through the real binary under
// mpirun: each must end with exit 2 and one message naming the input.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "process.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

struct Case {
  const char* name;
  const char* args;     // after "fabricbench run --progress off"
  const char* message;  // must be in stderr
  const char* not_said = nullptr;  // must not be
};

void PrintTo(const Case& c, std::ostream* os) { *os << "'" << c.args << "'"; }

class RunRefuses : public ::testing::TestWithParam<Case> {};

TEST_P(RunRefuses, WithExitTwoAndOneMessage) {
  // `timeout` turns a hang into exit 124: a hang fails the test instead of stalling it.
  const auto r = run_process("timeout 60 " + mpirun(2) + " " + FB_BINARY + " run --progress off " + GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  if (GetParam().not_said) {
    EXPECT_EQ(r.err.find(GetParam().not_said), std::string::npos) << r.err;
  }
  const auto first = r.err.find("fabricbench run:");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("fabricbench run:", first + 1), std::string::npos) << "one message, from rank 0: " << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RunRefuses,
    ::testing::Values(
        Case{"TimeBudgetNan", "--time-budget nan", "--time-budget nan"},
        // Was std::bad_alloc and exit 3: 2^63 bytes wrapped to a small need in the fit check.
        Case{"MaxBytesNear2To63", "-b 8 -e 9223372036854775808 --ops all_reduce", "host memory"},
        Case{"StepBytesAndStepFactor", "-i 8 -f 2", "--stepbytes 8 and --stepfactor 2 together"},
        Case{"EmptyOut", "--out ''", "empty path"},
        Case{"InjectKeyTwice", "--inject hang:rank=1,rank=0", "'rank' is given twice"},
        Case{"InjectCountBeyondTheBuffer", "-b 8 -e 64 --inject corrupt:rank=1,count=1000", "count=1000 is more"},
        // Was "elements per call exceed MPI's int count": the memory is what does not fit.
        Case{"SixteenGiBOnTheHost", "-b 16G -e 16G --ops all_reduce", "host memory", "int count"}),
    [](const auto& info) { return info.param.name; });

std::string two_commands(const std::string& a, const std::string& b) {
  return "timeout 60 " + std::string(FB_MPIEXEC) + " --allow-run-as-root --oversubscribe --bind-to none -np 1 " +
         FB_BINARY + " " + a + " : -np 1 " + FB_BINARY + " " + b;
}

TEST(Launch, RanksStartedWithDifferentSubcommandsAreRefused) {
  // Before: `run : topo` hung, `run : check` crashed in wait_quiet.
  for (const char* other : {"topo", "check --profile local-smoke", "pairs", "step --workload x.yaml"}) {
    const auto r = run_process(two_commands("run --progress off -n 2 -e 1K", other));
    EXPECT_EQ(r.exit_code, 2) << other << ": " << r.err;
    EXPECT_NE(r.err.find("but rank 0 runs 'fabricbench run'"), std::string::npos) << other << ": " << r.err;
  }
}

TEST(Launch, OptionsThatDifferNameTheOption) {
  const auto r = run_process(two_commands("run --progress off -n 5 -e 1K", "run --progress off -n 6 -e 1K"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--iters is 5 on rank 0 but 6 here"), std::string::npos) << r.err;
  const auto topo = run_process(two_commands("topo -q", "topo -q --strict"));
  EXPECT_EQ(topo.exit_code, 2) << topo.err;
  EXPECT_NE(topo.err.find("--strict is false on rank 0 but true here"), std::string::npos) << topo.err;
  const auto check = run_process(two_commands("check --profile local-smoke", "check --profile generic-spec"));
  EXPECT_EQ(check.exit_code, 2) << check.err;
  EXPECT_NE(check.err.find("--profile is"), std::string::npos) << check.err;
}

// A memory cgroup of this test's own (v2, or v1's memory controller), 3 GiB:
// `run -b 4G` in it must be refused before it allocates, as MemAvailable alone
// let it through to an OOM kill. Skips, saying why, where it cannot make one.
class MemoryCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    if (geteuid() != 0) GTEST_SKIP() << "needs root to create a memory cgroup";
    const std::string name = "fabricbench-test-" + std::to_string(getpid());
    if (fs::exists("/sys/fs/cgroup/cgroup.controllers")) {
      dir_ = "/sys/fs/cgroup/" + name;
      limit_file_ = "memory.max";
    } else if (fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
      dir_ = "/sys/fs/cgroup/memory/" + name;
      limit_file_ = "memory.limit_in_bytes";
    } else {
      GTEST_SKIP() << "no cgroup memory controller mounted at /sys/fs/cgroup";
    }
    std::error_code ec;
    if (!fs::create_directory(dir_, ec) || !std::ofstream(dir_ + "/" + limit_file_).good())
      GTEST_SKIP() << "cannot create a memory cgroup at " << dir_ << ": " << ec.message();
    std::ofstream(dir_ + "/" + limit_file_) << (3ull << 30);
  }
  void TearDown() override {
    if (!dir_.empty()) ::rmdir(dir_.c_str());  // empty once the job's processes are gone
  }
  std::string dir_;
  std::string limit_file_;
};

TEST_F(MemoryCgroup, ALimitSmallerThanMemAvailableIsTheFigure) {
  const auto r = run_process("timeout 60 sh -c 'echo $$ > " + dir_ + "/cgroup.procs && exec " + mpirun(2) + " " +
                             FB_BINARY + " run --progress off -b 1G -e 1G --ops all_reduce -d double'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("host memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("memory cgroup"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fb
