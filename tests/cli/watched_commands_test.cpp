// The hang watchdog in the commands other than `run`: step, check (the
// Slurm acceptance job) and pairs, end to end under mpirun with a planted
// hang (--inject, test-only). Each must end within its timeout plus a few
// seconds with exit 3, name the rank that never issued the call its peers
// are in, and leave a record whose closing line says so.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include <fstream>

#include "fabricbench/core/record.hpp"
#include "process.hpp"
#include "json_lines.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

class WatchedCommands : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_watched_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  test::ProcessResult run(int ranks, const std::string& launcher_flags, const std::string& args) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_process("timeout 120 " + mpirun(ranks) + " " + launcher_flags + " " + std::string(FB_BINARY) + " " +
                         args);
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
  // The closing line's hang report: `stuck` ranks named, the call they are in.
  static void expect_hang(const Results& res, int stuck, const std::string& op) {
    EXPECT_EQ(res.status, "hang");
    const auto report = fb::test::json_lines(res.path).back()["report"];
    EXPECT_EQ(report["stuck_ranks"], std::vector<int>{stuck}) << report.dump();
    ASSERT_FALSE(report["stuck"].empty()) << report.dump();
    EXPECT_EQ(report["stuck"][0]["op"], op) << report.dump();
    EXPECT_EQ(fb::test::json_lines(res.path).back()["exit_code"], 3);
  }
  std::string dir_;
  double seconds_ = 0;
};

TEST_F(WatchedCommands, StepHangInACallNamesTheRankThatNeverIssuedIt) {
  // The third DP all-reduce of the communication-only step never starts on rank 1.
  const std::string workload = std::string(FB_SOURCE_DIR) + "/profiles/workloads/host-dp-2ranks.yaml";
  const auto r = run(2, "", "step -w " + workload + " --steps 1 --warmup 0 --timeout 3 --out " + path("s.jsonl") +
                                " --inject hang:rank=1,op=all_reduce,after=2");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("fabricbench step: "), std::string::npos) << r.err;
  EXPECT_LT(seconds_, 60.0);
  const Results res = read_results(path("s.jsonl"));
  expect_hang(res, 1, "all_reduce");
  EXPECT_EQ(fb::test::json_lines(res.path).back()["report"]["stuck"][0]["phase"], "timed");
}

TEST_F(WatchedCommands, StepHangInAQueuedCallNamesTheRankThatNeverStartedIt) {
  // 5 calls in comm_only, 5 in serial: the 11th is the first one queued
  // under the compute of the overlapped step, started by the poll.
  const std::string workload = std::string(FB_SOURCE_DIR) + "/profiles/workloads/host-dp-2ranks.yaml";
  const auto r = run(2, "", "step -w " + workload + " --steps 1 --warmup 0 --timeout 3 --out " + path("s.jsonl") +
                                " --inject hang:rank=0,op=all_reduce,after=10");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_LT(seconds_, 60.0);
  const Results res = read_results(path("s.jsonl"));
  expect_hang(res, 0, "all_reduce");
  EXPECT_EQ(fb::test::json_lines(res.path).back()["report"]["waiting_ranks"], std::vector<int>{1});
}

TEST_F(WatchedCommands, CheckHangClosesTheRecordInsteadOfHoldingTheAllocation) {
  const auto r = run(2, "", "check --profile local-smoke -q --progress off --timeout 3 --out-dir " + path("c") +
                                " --inject hang:rank=1,op=all_gather,after=3");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("fabricbench check: "), std::string::npos) << r.err;
  EXPECT_LT(seconds_, 60.0);
  const Results res = read_results(path("c/results.jsonl"));
  expect_hang(res, 1, "all_gather");
  EXPECT_FALSE(res.measurements.empty());  // the all_reduce rows before the hang stay
  // What CI reads says so too, with the watchdog's reason.
  const auto verdict = nlohmann::json::parse(std::ifstream(path("c/check.json")));
  EXPECT_EQ(verdict["status"], "incomplete") << verdict.dump();
  EXPECT_NE(verdict["run_error"].get<std::string>().find("rank 1 is behind"), std::string::npos) << verdict.dump();
  // Every rule of the profile stays listed, unjudged, instead of vanishing.
  ASSERT_GE(verdict["verdicts"].size(), 2u) << verdict.dump();
  for (const auto& v : verdict["verdicts"]) EXPECT_EQ(v["status"], "error") << v.dump();
  EXPECT_EQ(verdict["counts"]["error"], verdict["verdicts"].size()) << verdict.dump();
}

TEST_F(WatchedCommands, PairsHangInOnePairIsNamedWhileTheOtherRankSitsOut) {
  // Three one-rank nodes: each round one pair measures and one node rests.
  const auto r = run(3, "-x FABRICBENCH_RANKS_PER_NODE=1",
                     "pairs --progress off -q --size 64K --window 2 -n 2 -w 1 --threshold 0 --timeout 3 --out " +
                         path("p.jsonl") + " --inject hang:rank=1,op=pingpong");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("fabricbench pairs: "), std::string::npos) << r.err;
  EXPECT_LT(seconds_, 60.0);
  expect_hang(read_results(path("p.jsonl")), 1, "pingpong");
}

TEST_F(WatchedCommands, PairsHangInALaterRoundIsNamedThoughPairsTookDifferentBatches) {
  // Four one-rank nodes, two pairs a round; rank 3 stops in its second pair's ping-pong.
  const auto r = run(4, "-x FABRICBENCH_RANKS_PER_NODE=1",
                     "pairs --progress off -q --size 64K --window 2 -n 2 -w 1 --threshold 0 --timeout 3 --out " +
                         path("p.jsonl") + " --inject hang:rank=3,op=pingpong,after=5");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_LT(seconds_, 60.0);
  expect_hang(read_results(path("p.jsonl")), 3, "pingpong");
}

TEST_F(WatchedCommands, BadTimeoutOrInjectionExitsTwoOnEveryCommand) {
  const std::string workload = std::string(FB_SOURCE_DIR) + "/profiles/workloads/host-dp-2ranks.yaml";
  const std::string out = " --out-dir " + path("c");
  const struct {
    std::string args;
    std::string says;
  } cases[] = {
      {"step -w " + workload + " --timeout soon", "--timeout 'soon': a time above 0"},
      {"step -w " + workload + " --inject x", "--inject 'x'"},
      {"check --profile local-smoke --timeout -4" + out, "--timeout '-4'"},
      {"check --profile local-smoke --inject hang:rank=7" + out, "--inject 'hang:rank=7': rank 7 but the job has 2"},
      {"check --profile local-smoke --inject hang:rank=1 --save-baseline " + path("b.jsonl") + out,
       "cannot be saved as a baseline"},
      {"pairs --timeout 1y", "--timeout '1y'"},
  };
  for (const auto& c : cases) {
    const auto r = run(2, "", c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace fb
