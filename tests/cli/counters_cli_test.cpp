// Error counters end to end on 2 local ranks as 2 emulated nodes
// (FABRICBENCH_RANKS_PER_NODE=1), each node's leader reading its own copy
// of an InfiniBand node's tree (FABRICBENCH_COUNTERS_ROOT with {node}).
// While the run measures, the test raises node 1's symbol_error as a bad
// cable would: the record gets `counters` lines for that node and port, run
// prints the fabric health section, and check's counters rule exits 1
// blaming node 1's port. With the trees left alone: no line, no section,
// exit 0.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "fabricbench/core/record.hpp"
#include "messages.hpp"
#include "process.hpp"

namespace fb {
namespace {

namespace fs = std::filesystem;
using test::lines_with;
using test::run_process;

const char* const kSymbolError = "sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error";

class CountersCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("fb_counters_cli_");
    for (const char* node : {"node0", "node1"})
      fs::copy(std::string(FB_TOPO_FIXTURES) + "/counters-ib", path(node),
               fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    std::ofstream(path("counters.yaml"))
        << "name: counters\nbackend: mpi\nsweeps:\n  - {ops: [all_reduce], minbytes: 64K, maxbytes: 1M, iters: 40}\n"
           "rules:\n  - {kind: counters, counter: symbol_error, max: 0}\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string launch() const {
    return "timeout 180 " + test::mpirun(2) +
           " -x FABRICBENCH_RANKS_PER_NODE=1 -x FABRICBENCH_COUNTERS_ROOT=" + path("node{node}") + " " + FB_BINARY;
  }
  std::string run_command(const std::string& record) const {
    return launch() + " run --progress off -q -b 1K -e 256K -f 2 -n 40 -w 2 --median-ci 0 --out " + path(record);
  }
  std::string check_command(const std::string& out) const {
    return launch() + " check --progress off -q --profile " + path("counters.yaml") + " --out-dir " + path(out);
  }
  // Runs `command` while node 1's symbol_error rises by one every millisecond
  // (each value written whole: a new file renamed over the old).
  test::ProcessResult with_errors_rising(const std::string& command) {
    std::atomic<bool> done{false};
    std::thread bumper([&] {
      const std::string file = path("node1/") + kSymbolError;
      for (int n = 1; !done; ++n) {
        std::ofstream(file + ".new") << n << "\n";
        fs::rename(file + ".new", file);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    auto r = run_process(command);
    done = true;
    bumper.join();
    return r;
  }
  // The record's HTML report, as `report html` writes it.
  std::string html_of(const std::string& record) const {
    const auto r =
        run_process(std::string(FB_BINARY) + " report html " + path(record) + " -o " + path(record + ".html"));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::ifstream in(path(record + ".html"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string dir_;
};

TEST_F(CountersCli, AnUnchangedTreeAddsNoLineAndNoSection) {
  const auto r = run_process(run_command("quiet.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(lines_with(r.err, "fabric health").empty()) << r.err;
  const Results res = read_results(path("quiet.jsonl"));
  EXPECT_GE(res.measurements.size(), 8u);
  EXPECT_TRUE(res.counters.empty());
  EXPECT_EQ(res.header.schema_version, schema_version());
  EXPECT_EQ(res.header.counters, path("node{node}"));
  // No counter in the report. The health section also lists rows whose
  // iteration times fell into two modes, which a loaded machine gives a
  // healthy fabric (CI saw one): that part is the section's only other reason.
  const std::string page = html_of("quiet.jsonl");
  EXPECT_EQ(page.find("data-counter="), std::string::npos) << "a healthy run shows no counter";
  if (page.find("id=\"health\"") != std::string::npos)
    EXPECT_NE(page.find("<h4>Two modes</h4>"), std::string::npos) << "a health section with neither counters nor modes";
  const auto c = run_process(check_command("quiet"));
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
}

TEST_F(CountersCli, SymbolErrorsDuringTheRunAreRecordedOnThatNodesPort) {
  const auto r = with_errors_rising(run_command("errors.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("errors.jsonl"));
  ASSERT_FALSE(res.counters.empty()) << "no row saw node 1's symbol_error rise";
  for (const auto& c : res.counters) {
    EXPECT_EQ(c.node, 1);
    EXPECT_EQ(c.host, res.header.hosts.at(1));
    EXPECT_EQ(c.device, "mlx5_0:1");
    EXPECT_EQ(c.device_kind, "port");
    EXPECT_EQ(c.counter, "symbol_error");
    ASSERT_TRUE(c.delta) << c.unknown_reason;
    EXPECT_GE(*c.delta, 1u);
    ASSERT_LT(c.row, res.measurements.size());
    const Measurement& row = res.measurements[c.row];
    EXPECT_EQ(c.op, row.op);
    EXPECT_EQ(c.bytes, row.bytes);
    EXPECT_EQ(c.run_id, res.header.run_id);
  }
  const auto section = lines_with(r.err, "fabric health");
  ASSERT_EQ(section.size(), 1u) << r.err;
  EXPECT_FALSE(lines_with(r.err, "mlx5_0:1").empty()) << r.err;
  // The HTML report shows them too, by device and counter.
  const std::string page = html_of("errors.jsonl");
  EXPECT_NE(page.find("<section id=\"health\""), std::string::npos);
  EXPECT_NE(page.find("data-device=\"mlx5_0:1\" data-counter=\"symbol_error\""), std::string::npos);
}

TEST_F(CountersCli, CheckFailsBlamingTheNodeAndPort) {
  const auto c = with_errors_rising(check_command("errors"));
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  std::ifstream in(path("errors/check.json"));
  const auto report = nlohmann::json::parse(in);
  ASSERT_FALSE(report["bad"].empty()) << report.dump(1);
  const Results res = read_results(path("errors/results.jsonl"));
  for (const auto& bad : report["bad"]) {
    EXPECT_EQ(bad["host"], res.header.hosts.at(1));
    EXPECT_EQ(bad["device"], "mlx5_0:1");
  }
}

// --counters off: the same rising errors leave no line, the header says
// off, and check's counters rule is not judged (a FAIL, never a pass on
// counters nobody read).
TEST_F(CountersCli, CountersOffReadsNoneAndTheRuleCannotPass) {
  const auto r = with_errors_rising(run_command("off.jsonl") + " --counters off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("off.jsonl"));
  EXPECT_GE(res.measurements.size(), 8u);
  EXPECT_TRUE(res.counters.empty()) << res.counters.size() << " lines though the counters were off";
  EXPECT_EQ(res.header.counters, "off");
  EXPECT_TRUE(lines_with(r.err, "fabric health").empty()) << r.err;

  const auto c = with_errors_rising(check_command("off") + " --counters off");
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  std::ifstream in(path("off/check.json"));
  const auto report = nlohmann::json::parse(in);
  ASSERT_EQ(report["verdicts"].size(), 1u) << report.dump(1);
  EXPECT_EQ(report["not_judged"], 1) << report.dump(1);
  EXPECT_NE(report["verdicts"][0]["reason"].get<std::string>().find("--counters off"), std::string::npos)
      << report.dump(1);
}

// pairs reads them around every round: a link whose bandwidth is fine but
// whose node counted errors while it was measured is named by its pair.
TEST_F(CountersCli, PairsNamesThePairMeasuredWhileTheCounterMoved) {
  const auto r =
      with_errors_rising(launch() + " pairs --progress off -q --size 256K --iters 20 --out " + path("pairs.jsonl"));
  // Two loaded ranks may measure one direction below 0.9 of the reference: a
  // finding and exit 1, which is not what this test is about.
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << r.out << r.err;
  const Results res = read_results(path("pairs.jsonl"));
  ASSERT_FALSE(res.pairs.empty());
  ASSERT_FALSE(res.counters.empty()) << "no round saw node 1's symbol_error rise";
  EXPECT_EQ(res.header.counters, path("node{node}"));
  for (const auto& c : res.counters) {
    EXPECT_EQ(c.op, "pairs");
    EXPECT_EQ(c.node, 1);
    EXPECT_EQ(c.device, "mlx5_0:1");
    ASSERT_LT(c.row, res.pairs.size());
    const PairLine& pair = res.pairs[c.row];
    EXPECT_TRUE(pair.node_a == 1 || pair.node_b == 1) << pair.node_a << "-" << pair.node_b;
  }
  const auto section = lines_with(r.err, "mlx5_0:1");
  ASSERT_EQ(section.size(), 1u) << r.err;
  EXPECT_NE(section[0].find(res.header.hosts.at(0) + "-" + res.header.hosts.at(1)), std::string::npos) << r.err;
}

// Every device of a node is read around every row, so a port that counts
// errors during an intra row is recorded with it, but as a device that row
// did not use: 2 nodes of 2 ranks, intra and inter rows on the host backend.
TEST_F(CountersCli, APortIsUsedByTheRowsThatLeaveTheNodeOnly) {
  const std::string command = "timeout 180 " + test::mpirun(4) +
                              " -x FABRICBENCH_RANKS_PER_NODE=2 -x FABRICBENCH_COUNTERS_ROOT=" + path("node{node}") +
                              " " + FB_BINARY +
                              " run --progress off -q --scope intra,inter -b 1K -e 64K -f 4 -n 20 -w 2 --median-ci 0 "
                              "--out " +
                              path("scopes.jsonl");
  const auto r = with_errors_rising(command);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(path("scopes.jsonl"));
  std::size_t used = 0, beside = 0;
  for (const auto& c : res.counters) {
    ASSERT_LT(c.row, res.measurements.size());
    const std::string& scope = res.measurements[c.row].scope;
    EXPECT_EQ(c.scope, scope);
    EXPECT_EQ(c.exercised, scope != "intra") << scope << " row " << c.row;
    ++(c.exercised ? used : beside);
  }
  EXPECT_GE(used, 1u) << "no inter row saw node 1's symbol_error rise";
  EXPECT_GE(beside, 1u) << "no intra row saw node 1's symbol_error rise";
  const auto section = lines_with(r.err, "mlx5_0:1");
  ASSERT_EQ(section.size(), 1u) << r.err;
  EXPECT_TRUE(section[0].ends_with(fmt::format(" {}", used))) << "the rows using it, last: " << r.err;
}

TEST_F(CountersCli, ARootThatIsNoFolderIsRefused) {
  const auto r = run_process("timeout 60 " + test::mpirun(2) + " -x FABRICBENCH_COUNTERS_ROOT=" + path("none") + " " +
                             FB_BINARY + " run --progress off -q -b 1K -e 1K -n 2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(lines_with(r.err, "FABRICBENCH_COUNTERS_ROOT").empty()) << r.err;
}

}  // namespace
}  // namespace fb
