// `fabricbench pairs` end to end under mpirun on this machine, with nodes
// forced by FABRICBENCH_RANKS_PER_NODE: the record, the schedule as run, the
// node selection, rails, and the messages users see for bad input. Findings
// on real links are the cluster tests' job (tests/cluster): here shared
// memory under a loaded machine is far too noisy to judge, so --threshold 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "fabricbench/core/record.hpp"
#include "process.hpp"
#include "json_lines.hpp"

namespace fb {
namespace {

using test::run_process;

class PairsCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_pairs_cli_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // `ranks` ranks in nodes of `per_node`, small and quick measurements.
  static std::string pairs(int ranks, int per_node, const std::string& args) {
    return "timeout 120 " + test::mpirun(ranks) + " -x FABRICBENCH_RANKS_PER_NODE=" + std::to_string(per_node) + " " +
           FB_BINARY + " pairs --progress off --size 64K --window 2 -n 2 -w 1 " + args;
  }
  std::vector<nlohmann::json> lines(const std::string& type) const {
    std::vector<nlohmann::json> out;
    for (const auto& l : fb::test::json_lines(path("p.jsonl")))
      if (l["type"] == type) out.push_back(l);
    return out;
  }
  std::string dir_;
};

TEST_F(PairsCli, OddNodeCountMeasuresEveryPairOnceInNRounds) {
  const auto r = run_process(pairs(5, 1, "--threshold 0 --out " + path("p.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("p.jsonl"));
  EXPECT_TRUE(res.complete);
  EXPECT_EQ(fb::test::json_lines(res.path).front()["command"], "pairs");
  std::set<std::pair<int, int>> seen;
  std::set<int> rounds;
  for (const auto& p : lines("pair")) {
    EXPECT_FALSE(p["retest"].get<bool>());
    EXPECT_TRUE(seen.insert({p["node_a"].get<int>(), p["node_b"].get<int>()}).second) << p.dump();
    EXPECT_GT(p["unidir_ab_gbps"].get<double>(), 0);
    EXPECT_GT(p["unidir_ba_gbps"].get<double>(), 0);
    EXPECT_GT(p["bidir_gbps"].get<double>(), 0);
    EXPECT_GT(p["latency_us"].get<double>(), 0);
    EXPECT_EQ(p["host_a"], fb::test::json_lines(res.path).front()["hosts"][p["node_a"].get<int>()]);
    EXPECT_EQ(p["path"], "shm");
    rounds.insert(p["round"].get<int>());
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(rounds.size(), 5u);  // odd N: N rounds, one node resting in each
  EXPECT_EQ(lines("node").size(), 5u);
  EXPECT_TRUE(lines("finding").empty());
  const auto summary = lines("summary").at(0);
  EXPECT_EQ(summary["pairs"], 10);
  EXPECT_EQ(summary["rounds"], 5);
  EXPECT_EQ(summary["exit_code"], 0);
  // The matrices on stdout, a row per node.
  EXPECT_NE(r.out.find("unidir GB/s, row sends to column"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("findings: none"), std::string::npos) << r.out;
}

TEST_F(PairsCli, NodesSelectsASubsetByHostNameOrIndex) {
  const auto r = run_process(pairs(4, 1, "--threshold 0 --nodes 0,2 --out " + path("p.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = lines("pair");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0]["node_a"], 0);
  EXPECT_EQ(p[0]["node_b"], 2);
  EXPECT_EQ(lines("node").size(), 2u);
}

TEST_F(PairsCli, RailsPairTheSameLocalRankOnEveryNode) {
  const auto r = run_process(pairs(4, 2, "--rails --threshold 0 --out " + path("p.jsonl")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::multiset<int> rails;
  for (const auto& p : lines("pair")) rails.insert(p["rail"].get<int>());
  EXPECT_EQ(rails, (std::multiset<int>{0, 1}));  // two nodes: one pair on each of two rails
  EXPECT_NE(r.out.find("## rail 1"), std::string::npos) << r.out;
}

TEST_F(PairsCli, ExpectedRateAboveWhatTheLinksDoFailsTheRun) {
  // No node has all its links good, so nothing is retested and every finding counts.
  const auto r = run_process(pairs(3, 1, "--expect-gbps 100000 --out " + path("p.jsonl")));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto findings = lines("finding");
  ASSERT_FALSE(findings.empty());
  for (const auto& f : findings) EXPECT_TRUE(f["retested_against"].is_null()) << f.dump();
  EXPECT_GT(lines("summary").at(0)["failing_findings"].get<int>(), 0);
}

struct BadInput {
  std::string name;
  int ranks;
  int per_node;
  std::string args;
  std::string message;
};

void PrintTo(const BadInput& b, std::ostream* os) { *os << "'" << b.args << "'"; }

class PairsCliBadInput : public PairsCli, public ::testing::WithParamInterface<BadInput> {};

TEST_P(PairsCliBadInput, ExitsTwoWithOneClearMessage) {
  const auto& b = GetParam();
  const auto r = run_process(pairs(b.ranks, b.per_node, b.args));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err;
  const auto first = r.err.find("fabricbench pairs:");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("fabricbench pairs:", first + 1), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PairsCliBadInput,
    ::testing::Values(BadInput{"OneNode", 2, 2, "",
                               "at least two nodes, e.g. mpirun --map-by ppr:1:node over a hostfile of the nodes (to "
                               "try it on one machine, take each local rank as a node: mpirun -x "
                               "FABRICBENCH_RANKS_PER_NODE=1)"},
                      BadInput{"ZeroSize", 2, 1, "--size 0", "--size"},
                      BadInput{"TinyLatencySize", 2, 1, "--latency-size 2", "less than one float"},
                      BadInput{"UnknownNode", 3, 1, "--nodes nosuchhost", "no node has that host name"},
                      BadInput{"NodeIndexOutOfRange", 3, 1, "--nodes 0-5", "--nodes '0-5'"},
                      BadInput{"OneSelectedNode", 3, 1, "--nodes 1", "at least two"},
                      BadInput{"ThresholdAboveOne", 2, 1, "--threshold 1.5", "--threshold"},
                      BadInput{"NegativeExpectedRate", 2, 1, "--expect-gbps -1", "--expect-gbps"},
                      BadInput{"UnevenRails", 3, 2, "--rails", "different rank counts"},
                      BadInput{"UnknownBackend", 2, 1, "--backend nope", "--backend 'nope'"},
                      BadInput{"OutInMissingFolder", 2, 1, "--out /nonexistent-dir/p.jsonl", "does not exist"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace fb
