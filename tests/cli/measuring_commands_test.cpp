// Every measuring command (run, check, pairs, step, storage, gemm) through
// the same failure cases, end to end under mpirun, held to the same exit
// codes and record endings: they share one sequence (src/cli/measuring_command.hpp)
// and this test is what keeps a command from drifting out of it.
//   a bad flag on one rank       exit 2, one message, no record
//   an output that cannot be     exit 2 before anything runs, naming it
//     made
//   an output that fails while   exit 3 naming it
//     written (a full disk)
//   a planted hang               exit 3, the record closed as "hang"
//   SIGTERM to every rank        the record closed as "killed", exit_code 143
// A case a command cannot meet on this machine says why in the test's output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fabricbench/core/record.hpp"
#include "process.hpp"
#include "json_lines.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

struct MeasuringCommand {
  const char* name;
  const char* launcher;  // extra mpirun flags
  const char* args;      // a short clean run; {d} is the test's folder
  const char* record;    // the flag that writes the record at {out}
  const char* hang;      // flags that plant a hang in the backend; "" when there is none (why in no_hang)
  const char* no_hang;
  const char* no_run;  // why the command cannot measure on this machine ("" when it can)
  // A thread of its own beside the watchdog's (why), so MPI runs at
  // MPI_THREAD_FUNNELED even with --timeout 0; "" when there is none.
  const char* own_thread = "";
};

const MeasuringCommand kCommands[] = {
    {"run", "", "run -q --progress off -b 8 -e 64K --ops all_reduce,all_gather", "--out {out}",
     "--inject hang:rank=1,op=all_gather", "", ""},
    {"check", "", "check --profile local-smoke -q --progress off", "--out-dir {out}.d",
     "--inject hang:rank=1,op=all_gather,after=3", "", ""},
    {"pairs", "-x FABRICBENCH_RANKS_PER_NODE=1",
     "pairs --progress off -q --size 64K --window 2 -n 2 -w 1 --threshold 0", "--out {out}",
     "--inject hang:rank=1,op=pingpong", "", ""},
    {"step", "", "step -w " FB_SOURCE_DIR "/profiles/workloads/host-dp-2ranks.yaml --steps 1 --warmup 0", "--out {out}",
     "--inject hang:rank=1,op=all_reduce,after=2", "", ""},
    {"storage", "-x FABRICBENCH_RANKS_PER_NODE=1",
     "storage --path {d}/data -q --patterns small --files 4000 --file-bytes 16K", "--out {out}", "",
     "storage has no backend to plant a hang in", "", "storage's cleanup waits for signals on a thread of its own"},
    {"gemm", "", "gemm -q --size 64", "--out {out}", "", "gemm has no backend to plant a hang in",
     "gemm needs a GPU, and the CPU tests run without one"},
};

void PrintTo(const MeasuringCommand& c, std::ostream* os) { *os << c.name; }

std::string replaced(std::string text, const std::string& key, const std::string& value) {
  for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

class Measuring : public ::testing::TestWithParam<MeasuringCommand> {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("fb_measuring_");
    std::filesystem::create_directories(dir_ + "/data");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  const MeasuringCommand& command() const { return GetParam(); }
  // The command's clean run, with its record written to `out`.
  std::string args(const std::string& out) const {
    const std::string record = replaced(command().record, "{out}", out);
    return replaced(std::string(command().args) + " " + record, "{d}", dir_);
  }
  // Where the command's record lands when its record flag names `out`.
  std::string record_at(const std::string& out) const {
    return std::string(command().name) == "check" ? out + ".d/results.jsonl" : out;
  }
  std::string launch(int ranks) const { return mpirun(ranks) + " " + command().launcher + " "; }
  std::string binary() const { return std::string(FB_BINARY) + " "; }
  // How many times stderr starts a message the way the command does.
  std::size_t messages(const std::string& err) const {
    const std::string head = std::string("fabricbench ") + command().name + ": ";
    std::size_t n = 0;
    for (auto at = err.find(head); at != std::string::npos; at = err.find(head, at + 1)) ++n;
    return n;
  }
  std::string dir_;
};

TEST_P(Measuring, ABadFlagOnOneRankStopsEveryRankWithExitTwoAndOneMessage) {
  const std::string out = dir_ + "/r.jsonl";
  const auto r = run_process("timeout 120 " + mpirun(1) + " " + command().launcher + " " + binary() + args(out) +
                             " : -np 1 " + binary() + args(out) + " --no-such-flag");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--no-such-flag"), std::string::npos) << r.err;
  EXPECT_EQ(messages(r.err), 1u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(record_at(out))) << "a refused run wrote its record";
}

// --timeout 0: no watchdog. A command that then runs no thread of its own
// asks MPI for MPI_THREAD_SINGLE, at which Open MPI skips its locks (small
// messages up to 0.5 us faster on 2 local ranks: docs/figures.md); the header
// says which level ran, so records measured both ways are told apart.
TEST_P(Measuring, WithoutTheWatchdogTheHeaderSaysTheThreadLevelMpiRanAt) {
  if (*command().no_run) GTEST_SKIP() << command().no_run;
  const std::string out = dir_ + "/r.jsonl";
  const auto r = run_process("timeout 120 " + launch(2) + binary() + args(out) + " --timeout 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(record_at(out));
  const bool own_thread = *command().own_thread;
  EXPECT_EQ(res.header.mpi_thread_level, std::string(own_thread ? "MPI_THREAD_FUNNELED" : "MPI_THREAD_SINGLE"))
      << (own_thread ? command().own_thread : "no thread of its own without the watchdog");
}

TEST_P(Measuring, AnOutputThatCannotBeMadeIsExitTwoBeforeAnythingRuns) {
  const std::string out = "/proc/fabricbench-cannot-write-here/r.jsonl";
  const auto r = run_process("timeout 120 " + launch(2) + binary() + args(out));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/proc/fabricbench-cannot-write-here"), std::string::npos) << r.err;
  EXPECT_EQ(messages(r.err), 1u) << r.err;
}

TEST_P(Measuring, AnOutputThatFailsWhileWrittenIsExitThreeNamingItOnEveryRank) {
  if (*command().no_run) GTEST_SKIP() << command().no_run;
  // A disk that is full when the record is written: a one-page tmpfs, filled,
  // in a mount namespace of the test's own, gone with the namespace.
  if (run_process("unshare -m true").exit_code != 0)
    GTEST_SKIP() << "unshare -m failed: a private mount namespace needs root (CAP_SYS_ADMIN)";
  const std::string full = dir_ + "/full";
  std::filesystem::create_directories(full);
  // Each rank's own exit code, as srun reports them: mpirun is told to let
  // every rank end on its own instead of killing the rest at the first that fails.
  std::ofstream(dir_ + "/run.sh") << "mount -t tmpfs -o size=4k fabricbench-test " << full << " || exit 99\n"
                                  << "head -c 4096 /dev/zero >" << full << "/filler\n"
                                  << launch(2) << " --mca orte_abort_on_non_zero_status 0 sh -c '" << binary()
                                  << args(full + "/r.jsonl") << "; c=$?; echo $c >" << dir_
                                  << "/exit.$OMPI_COMM_WORLD_RANK; exit $c'\n";
  const auto r = run_process("timeout 120 unshare -m sh " + dir_ + "/run.sh");
  EXPECT_NE(r.err.find(std::string("fabricbench ") + command().name + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(full), std::string::npos) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    std::string code;
    std::ifstream(dir_ + "/exit." + std::to_string(rank)) >> code;
    EXPECT_EQ(code, "3") << "rank " << rank << "\n" << r.err;
  }
}

TEST_P(Measuring, HelpOnOneRankOnlyIsExitTwoNotAHang) {
  // Rank 0 alone would print its help and leave while rank 1 waited for it.
  const std::string out = dir_ + "/r.jsonl";
  const auto r = run_process("timeout 60 " + mpirun(1) + " " + command().launcher + " " + binary() + args(out) +
                             " --help : -np 1 " + binary() + args(out));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("give every rank the same command line"), std::string::npos) << r.err;
  EXPECT_EQ(messages(r.err), 1u) << r.err;
}

TEST_P(Measuring, APlantedHangEndsWithExitThreeAndTheRecordClosedAsHang) {
  if (*command().no_run) GTEST_SKIP() << command().no_run;
  if (!*command().hang) GTEST_SKIP() << command().no_hang;
  const std::string out = dir_ + "/r.jsonl";
  const auto r = run_process("timeout 120 " + launch(2) + binary() + args(out) + " --timeout 3 " + command().hang);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(std::string("fabricbench ") + command().name + ": "), std::string::npos) << r.err;
  const Results res = read_results(record_at(out));
  EXPECT_EQ(res.status, "hang") << r.err;
  ASSERT_TRUE(res.summary);
  EXPECT_EQ(res.summary->exit_code, 3);
}

TEST_P(Measuring, SigtermToEveryRankClosesTheRecordAsKilled) {
  if (*command().no_run) GTEST_SKIP() << command().no_run;
  // As Slurm does on scancel or a time limit: SIGTERM to every rank, once the
  // record is open. A hang (or many small files) keeps the command measuring
  // until then; the timeout is far beyond the test's.
  const std::string out = dir_ + "/r.jsonl";
  const std::string record = record_at(out);
  const std::string hold = *command().hang ? std::string(" --timeout 100 ") + command().hang : "";
  const std::string cmd = launch(2) + binary() + args(out) + hold + " & m=$!; for i in $(seq 600); do test -s " +
                          record + " && break; sleep 0.05; done; kill -TERM $(pgrep -P $m); wait $m";
  const auto r = run_process("timeout 120 sh -c '" + cmd + "'");
  const Results res = read_results(record);
  EXPECT_EQ(res.status, "killed") << r.err;
  ASSERT_TRUE(res.summary) << r.err;
  EXPECT_EQ(res.summary->exit_code, 128 + 15);
  EXPECT_EQ(fb::test::json_lines(res.path).back()["report"]["signal"], "SIGTERM")
      << fb::test::json_lines(res.path).back().dump();
}

INSTANTIATE_TEST_SUITE_P(Commands, Measuring, ::testing::ValuesIn(kCommands),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace fb
