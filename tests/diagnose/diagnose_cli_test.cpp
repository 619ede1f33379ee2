// `fabricbench diagnose` end to end on this machine (no NVML): the iteration
// part works, every GPU figure says why it is unknown, bad input per source
// is a message and the rest goes on, bad flags exit 2.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "fabricbench/core/record.hpp"
#include "process.hpp"
#include "json_lines.hpp"

namespace fb {
namespace {

class DiagnoseCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_diagnose_cli_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  test::ProcessResult diagnose(const std::string& args) const {
    return test::run_process(std::string(FB_BINARY) + " diagnose " + args);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  void write_log(const std::string& name, const std::vector<double>& ms) const {
    std::ofstream out(path(name));
    int i = 0;
    for (double v : ms) out << " iteration " << ++i << "/ 1000 | elapsed time per iteration (ms): " << v << " |\n";
  }
  std::string dir_;
};

int dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

TEST_F(DiagnoseCli, IterationTimesThatVaryAreStarvedWithoutNvmlAndTheRecordSaysWhy) {
  write_log("train.log", {1000, 1500, 900, 1600, 1000, 1400, 950, 1550, 1000, 1500});
  const auto r = diagnose("--seconds 1 --interval 0.25 --iter-log " + path("train.log") + " --pid " +
                          std::to_string(dead_pid()) + " --out " + path("d.jsonl") + " --samples-out " +
                          path("s.json"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // a problem verdict
  EXPECT_NE(r.err.find("no such process running"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("starved by input"), std::string::npos) << r.out;
  const Results res = read_results(path("d.jsonl"));
  EXPECT_EQ(res.header.command, "diagnose");
  EXPECT_TRUE(res.complete);
  EXPECT_EQ(res.inventory.size(), 1u);
  ASSERT_EQ(res.diagnoses.size(), 1u);  // no NVML here: the node line alone
  const auto& node = res.diagnoses[0];
  EXPECT_EQ(node.level, "node");
  EXPECT_EQ(node.verdict, "input_starved");
  EXPECT_NE(node.reason.find("iteration times vary"), std::string::npos) << node.reason;
  EXPECT_NE(node.reason.find("GPU figures unknown: NVML not loaded"), std::string::npos) << node.reason;
  ASSERT_TRUE(node.node_figures);
  EXPECT_EQ(node.node_figures->iterations, 10u);
  EXPECT_NEAR(*node.node_figures->iter_median, 1.2, 0.2);
  EXPECT_FALSE(node.node_figures->process_cpu_cores);
  bool gpus_why = false, pid_why = false;
  for (const auto& [figure, why] : node.unknown) {
    gpus_why |= figure == "gpus" && why.find("NVML") != std::string::npos;
    pid_why |= figure == "process_cpu_cores" && why.find("no such process") != std::string::npos;
  }
  EXPECT_TRUE(gpus_why && pid_why) << fb::test::json_lines(res.path).back().dump();
  EXPECT_EQ(res.summary->exit_code, 1);
  // The readings replay to the same verdict.
  const auto replay = diagnose("--replay " + path("s.json") + " --out " + path("again.jsonl"));
  EXPECT_EQ(replay.exit_code, 1) << replay.err;
  EXPECT_EQ(read_results(path("again.jsonl")).diagnoses.at(0).verdict, "input_starved");
}

TEST_F(DiagnoseCli, SteadyIterationsAndAnUnreadableLogStillGiveAVerdict) {
  write_log("steady.log", std::vector<double>(12, 800));
  auto r = diagnose("--seconds 0 --iter-log " + path("steady.log") + " --out " + path("a.jsonl"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_results(path("a.jsonl")).diagnoses.at(0).verdict, "undetermined");
  r = diagnose("--seconds 0.5 --interval 0.25 --iter-log " + path("missing.log") + " --out " + path("b.jsonl"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--iter-log " + path("missing.log") + ": cannot"), std::string::npos) << r.err;
  const Results res = read_results(path("b.jsonl"));
  ASSERT_EQ(res.diagnoses.size(), 1u);
  bool said = false;
  for (const auto& [figure, why] : res.diagnoses[0].unknown) said |= figure == "iter_median" && why.find("cannot") != why.npos;
  EXPECT_TRUE(said) << fb::test::json_lines(res.path).back().dump();
}

TEST_F(DiagnoseCli, BadFlagsExitTwoNamingTheFlag) {
  struct Case {
    std::string args, says;
  };
  for (const auto& c : {Case{"--seconds -1", "--seconds -1"}, Case{"--interval 0.001", "--interval 0.001"},
                        Case{"--iter-log x --iter-regex 'a(b'", "--iter-regex 'a(b': not a regular expression"},
                        Case{"--iter-regex 't=([0-9]+)'", "--iter-regex reads --iter-log"},
                        Case{"--iter-log x --iter-unit min", "--iter-unit 'min'"},
                        Case{"--seconds 0", "--seconds 0 samples nothing"},
                        Case{"--replay /nonexistent.json", "--replay '/nonexistent.json': cannot read it"}}) {
    const auto r = diagnose(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
}

// Issue 35: std::regex backtracks without bound on a pattern such as
// '(a+)+b' (2^n steps over a run of n a's). The user's pattern is given up
// on after FABRICBENCH_ITER_REGEX_TIMEOUT_S, saying why, and the run ends
// with its record instead of hanging; the iteration figures are unknown with
// that reason.
TEST_F(DiagnoseCli, ABacktrackingIterRegexIsGivenUpOnWithTheReason) {
  {
    std::ofstream out(path("train.log"));
    for (int i = 0; i < 20; ++i) out << std::string(40, 'a') << "\n";
  }
  const auto started = std::chrono::steady_clock::now();
  const auto r = test::run_process("FABRICBENCH_ITER_REGEX_TIMEOUT_S=1 timeout 60 " + std::string(FB_BINARY) +
                                   " diagnose --seconds 0 --iter-log " + path("train.log") +
                                   " --iter-regex '^(a+)+b([0-9]+)' --out " + path("r.jsonl"));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(r.exit_code, 124) << "hung: " << r.err;
  EXPECT_LT(took, 30.0) << r.err;
  EXPECT_NE(r.err.find("took more than 1 s: the pattern backtracks"), std::string::npos) << r.err;
  const Results res = read_results(path("r.jsonl"));
  ASSERT_EQ(res.diagnoses.size(), 1u);
  bool said = false;
  for (const auto& [figure, why] : res.diagnoses[0].unknown)
    said |= figure == "iter_median" && why.find("the pattern backtracks") != why.npos;
  EXPECT_TRUE(said) << fb::test::json_lines(res.path).back().dump();
}

TEST_F(DiagnoseCli, UnderMpirunEachNodeSamplesOnce) {
  write_log("train.log", std::vector<double>(10, 500));
  const auto r = test::run_process(test::mpirun(2) + " " + FB_BINARY + " diagnose --seconds 0.5 --interval 0.25 "
                                   "--iter-log " + path("train.log") + " --out " + path("m.jsonl"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("m.jsonl"));
  EXPECT_EQ(res.inventory.size(), 2u);  // every rank's inventory
  EXPECT_EQ(res.diagnoses.size(), 1u);  // one node: sampled by its local rank 0 alone
}

}  // namespace
}  // namespace fb
