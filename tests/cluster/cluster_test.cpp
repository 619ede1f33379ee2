// fabricbench on emulated nodes: four network namespaces behind TBF-shaped
// links (1 Gbit/s; node 3 at 250 Mbit/s), real MPI over TCP between them,
// brought up and down by the ctest fixture (tests/cluster/fixture.sh).
// Measurements run with the machine under whatever load it has: sizes and
// iteration counts keep each test to seconds, and the wrapper's
// mpi_yield_when_idle keeps busy-polling ranks from starving the links.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <thread>

#include "fabricbench/core/modes.hpp"
#include "fabricbench/core/record.hpp"
#include "process.hpp"
#include "json_lines.hpp"

namespace fb {
namespace {

// TBF counts whole Ethernet frames; TCP carries 1448 payload bytes in each
// 1514-byte frame (MTU 1500, timestamps on). So a shaped rate R bit/s moves
// R/8 * 1448/1514 bytes/s of messages: 119.6 MB/s at 1 Gbit/s, as measured
// by hand with MPI (shared/notes/environment.md: 119.8 MB/s).
constexpr double kPayloadPerFrame = 1448.0 / 1514.0;
constexpr double kFastGbps = 1e9 / 8 * kPayloadPerFrame / 1e9;
constexpr double kSlowGbps = 250e6 / 8 * kPayloadPerFrame / 1e9;

class Cluster : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "emulated nodes need root (network namespaces, tc)";
    if (!std::filesystem::exists(FB_CLUSTER_DIR "/mpirun"))
      GTEST_SKIP() << "no emulated cluster at " FB_CLUSTER_DIR ": run through ctest, whose fixture (cluster.up) "
                      "brings it up";
    mpirun_ = "timeout 240 " FB_CLUSTER_DIR "/mpirun";
    name_ = FB_CLUSTER_NAME;
    tmp_ = test::make_temp_dir("fb_cluster_");
  }
  void TearDown() override {
    if (!tmp_.empty()) std::filesystem::remove_all(tmp_);
  }
  std::string host(int node) const { return name_ + "-n" + std::to_string(node); }
  std::string out() const { return tmp_ + "/r.jsonl"; }
  // One rank per node unless `extra` maps otherwise.
  // Each call writes a fresh record (an existing --out is refused without --overwrite).
  test::ProcessResult fabricbench(const std::string& args, int ranks = 4, const std::string& extra = "") const {
    std::filesystem::remove(out());
    auto r = test::run_process(mpirun_ + " -np " + std::to_string(ranks) + " " + extra + " " + FB_BINARY + " " + args +
                               " --progress off --out " + out());
    if (steady_links_) expect_one_mode();
    return r;
  }
  // Every steady curve these tests record holds the bimodal statistic
  // (core/modes.hpp) to zero false alarms: no row or link of a record made on
  // links that kept their rate has two modes. Fixtures that change a rate
  // during a run, or make a link drop, turn this off.
  void expect_one_mode() const {
    if (!std::filesystem::exists(out())) return;
    Results res;
    try {
      res = read_results(out());
    } catch (const std::exception&) {
      return;  // a run that failed on purpose; its test judges the record
    }
    for (const auto& m : res.measurements)
      EXPECT_FALSE(m.modes.has_value()) << "steady link, bimodal row " << m.op << "/" << m.scope << " " << m.bytes
                                        << ": " << modes_text(*m.modes);
    for (const auto& p : res.pairs)
      EXPECT_FALSE(p.modes.has_value()) << "steady link, bimodal pair " << p.host_a << " - " << p.host_b << ": "
                                        << modes_text(*p.modes);
  }
  bool steady_links_ = true;
  std::vector<nlohmann::json> lines(const std::string& type) const {
    std::vector<nlohmann::json> found;
    for (const auto& l : fb::test::json_lines(out()))
      if (l["type"] == type) found.push_back(l);
    return found;
  }
  // Unidir bandwidth between two nodes (ranks of the inter scope = node order).
  double unidir_gbps(int a, int b) const {
    const auto r = fabricbench("run --backend mpi --scope inter --ops unidir -b 2M -e 2M --window 4 -n 20 -w 2 --peers " +
                               std::to_string(a) + "," + std::to_string(b));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const Results res = read_results(out());
    EXPECT_EQ(fb::test::json_lines(res.path).front()["hosts"][a], host(a + 1));
    EXPECT_EQ(fb::test::json_lines(res.path).front()["hosts"][b], host(b + 1));
    EXPECT_EQ(res.measurements.size(), 1u);
    if (res.measurements.empty()) return 0;
    const auto& m = res.measurements[0];
    EXPECT_EQ(m.path, "tcp");
    std::printf("unidir %s -> %s: %.1f MB/s (median of %zu, min time %.0f us, max %.0f us)\n", host(a + 1).c_str(),
                host(b + 1).c_str(), m.algbw_gbps * 1e3, m.time.iterations, m.time.min_us, m.time.max_us);
    return m.algbw_gbps;
  }
  // TBF on both ends of node n's link, as emulate-cluster.sh sets it up.
  bool reshape(int n, const std::string& rate) const {
    const std::string tbf = " root tbf rate " + rate + " burst 512kb latency 20ms";
    const std::string node = name_ + "-n" + std::to_string(n), sw = name_ + "-sw";
    return std::system(("ip netns exec " + node + " tc qdisc replace dev eth0" + tbf + " && ip netns exec " + sw +
                        " tc qdisc replace dev p" + std::to_string(n) + tbf)
                           .c_str()) == 0;
  }
  std::string mpirun_;
  std::string name_;
  std::string tmp_;
  // The hostfile's address of node `n` (1-based): mpirun's --host takes it.
  std::string address(int n) const {
    std::ifstream in(FB_CLUSTER_DIR "/hostfile");
    std::string line;
    for (int i = 1; std::getline(in, line); ++i)
      if (i == n) return line.substr(0, line.find(' '));
    return "";
  }
};

TEST_F(Cluster, UnidirBetweenTwoFastNodesIsTheShapedRate) {
  EXPECT_NEAR(unidir_gbps(0, 1), kFastGbps, 0.10 * kFastGbps);
}

TEST_F(Cluster, UnidirToTheSlowNodeIsItsShapedRate) {
  EXPECT_NEAR(unidir_gbps(0, 2), kSlowGbps, 0.10 * kSlowGbps);
}

TEST_F(Cluster, HostsAreTheNamespacesAndInterHasOneRankPerNode) {
  // Two ranks on each node: the inter scope must still take one per node.
  const auto r = fabricbench("run --scope global,inter --ops all_reduce -b 8 -e 8 -n 3 -w 1 -c", 8,
                             "--map-by ppr:2:node --oversubscribe");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(out());
  EXPECT_EQ(fb::test::json_lines(res.path).front()["hosts"], nlohmann::json({host(1), host(2), host(3), host(4)}));
  EXPECT_EQ(fb::test::json_lines(res.path).front()["ranks_per_node"], nlohmann::json({2, 2, 2, 2}));
  std::set<std::string> scopes;
  for (const auto& m : res.measurements) {
    scopes.insert(m.scope);
    EXPECT_EQ(m.wrong, 0);
    EXPECT_EQ(m.nranks, m.scope == "inter" ? 4 : 8) << m.scope;
    EXPECT_EQ(m.path, "tcp");
  }
  EXPECT_EQ(scopes, (std::set<std::string>{"global", "inter"}));
}

// The threshold for the pairs tests. The default, 0.9 of the reference, is
// for real clusters. Here every emulated node shares this machine's two cores
// with whatever else runs, and bidirectional TCP turns CPU-bound: measured
// 0.13-0.21 GB/s of the 0.239 the shaping allows, wandering by a quarter
// between pairs and between a pair and its retest. The slow node measures
// 0.25-0.35 of the reference, so 0.6 tells it apart with room on both sides.
constexpr const char* kPairs = "pairs --size 1M --window 8 -n 5 -w 1 --threshold 0.6";

TEST_F(Cluster, PairsFlagsExactlyTheSlowNode) {
  const auto r = fabricbench(kPairs);
  std::printf("%s\n", r.out.c_str());
  EXPECT_EQ(r.exit_code, 1) << "findings must fail the run\n" << r.err;
  const auto pairs = lines("pair");
  std::set<std::pair<std::string, std::string>> measured;
  for (const auto& p : pairs)
    if (!p["retest"].get<bool>()) measured.insert({p["host_a"].get<std::string>(), p["host_b"].get<std::string>()});
  EXPECT_EQ(measured.size(), 6u);

  // Every finding that fails the run names node 3, and node 3 alone.
  int failing = 0;
  for (const auto& f : lines("finding")) {
    if (f["intermittent"].get<bool>()) {
      std::printf("warning (cleared by its retest): %s\n", f["detail"].get<std::string>().c_str());
      continue;
    }
    ++failing;
    EXPECT_EQ(f["kind"], "node") << f.dump();
    EXPECT_EQ(f["hosts"], nlohmann::json({host(3)})) << f.dump();
    EXPECT_TRUE(f["confirmed"].get<bool>()) << f.dump();
    EXPECT_LT(f["retest_ratio"].get<double>(), 0.45) << f.dump();
  }
  EXPECT_EQ(failing, 1);
  const auto summary = lines("summary").at(0);
  EXPECT_EQ(summary["bad_nodes"], nlohmann::json({host(3)}));
  EXPECT_NEAR(summary["reference_unidir_gbps"].get<double>(), kFastGbps, 0.2 * kFastGbps);
  EXPECT_NE(r.out.find("bad nodes: " + host(3)), std::string::npos) << r.out;
}

TEST_F(Cluster, PairsOnTheFastNodesAloneFindsNothingToFail) {
  // Bisecting: --nodes leaves the slow node out (three nodes: a bye each round).
  const auto r = fabricbench(std::string(kPairs) + " --nodes " + host(1) + "," + host(2) + "," + host(4));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(lines("summary").at(0)["failing_findings"], 0);
  for (const auto& p : lines("pair")) EXPECT_NE(p["host_a"], host(3));
}

// `fabricbench check` measures the pair matrix its profile asks for into its
// own record, and a pairs rule names the slow node's links. The bound is 0.8
// of the median link: with three fast and three slow links the median sits
// between them, so a slow link (a quarter of a fast one) is at about 0.4 and
// a fast one above 1, whatever share of this machine's cores the links get.
TEST_F(Cluster, CheckMeasuresThePairsItsProfileAsksForAndNamesTheSlowNode) {
  const std::string profile = tmp_ + "/links.yaml";
  std::ofstream(profile) << "name: links\nbackend: mpi\n"
                            "sweeps:\n  - {ops: [all_reduce], scopes: [inter], minbytes: 64K, maxbytes: 64K, iters: 5, "
                            "check: true}\n"
                            "pairs: {size: 1M, iters: 5}\n"
                            "rules:\n  - {name: no weak link, kind: pairs, metric: unidir, min: 0.8 of median}\n"
                            "  - {name: right elements, kind: correctness}\n";
  const auto r = test::run_process(mpirun_ + " -np 4 " + FB_BINARY + " check --profile " + profile + " -q --progress off" +
                                   " --out-dir " + tmp_ + "/check");
  std::printf("%s\n", r.out.c_str());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Results rec = read_results(tmp_ + "/check/results.jsonl");
  EXPECT_TRUE(rec.complete);
  int pairs = 0;
  for (const auto& l : fb::test::json_lines(rec.path)) pairs += l["type"] == "pair" && !l["retest"].get<bool>();
  EXPECT_EQ(pairs, 6);
  std::ifstream in(tmp_ + "/check/check.json");
  const auto report = nlohmann::json::parse(in);
  ASSERT_EQ(report["verdicts"].size(), 2u);
  const auto& links = report["verdicts"][0];
  EXPECT_EQ(links["status"], "fail") << links.dump();
  EXPECT_EQ(report["verdicts"][1]["status"], "pass");
  // Every link beyond the bound has the slow node at one end.
  const std::string reason = links["reason"];
  const auto listed = reason.find("beyond the bound: ");
  ASSERT_NE(listed, std::string::npos) << reason;
  std::stringstream items(reason.substr(listed + 18));
  for (std::string item; std::getline(items, item, ';');) EXPECT_NE(item.find(host(3)), std::string::npos) << reason;
}

// The shipped TCP profile (profiles/host-tcp.yaml) on the four nodes: its
// pairs rule judges each node's median link against the other nodes', so it
// names node 3 (a quarter of the others' rate) and only node 3, in check.json
// `bad` and as the one failing node testcase of junit.xml; with node 3's link
// as fast as the others' it passes. The bound is relative: however loaded
// this machine's cores, all links share them alike.
class ClusterHostTcp : public Cluster {
 protected:
  void TearDown() override {
    // The fixture's shape, whatever the test did: the other tests need node 3 slow.
    if (reshaped_) {
      EXPECT_TRUE(reshape(3, "250mbit")) << "could not put node 3 back to 250 Mbit/s";
    }
    Cluster::TearDown();
  }
  test::ProcessResult check(const std::string& dir) const {
    return test::run_process(mpirun_ + " -np 4 " + FB_BINARY + " check --profile " FB_SOURCE_DIR
                             "/profiles/host-tcp.yaml -q --progress off --out-dir " + tmp_ + "/" + dir);
  }
  nlohmann::json report(const std::string& dir) const {
    std::ifstream in(tmp_ + "/" + dir + "/check.json");
    return nlohmann::json::parse(in);
  }
  std::string junit(const std::string& dir) const {
    std::ifstream in(tmp_ + "/" + dir + "/junit.xml");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // Node n's testcase in the JUnit text, "" when there is none.
  std::string node_case(const std::string& xml, int n) const {
    const auto at = xml.find("<testcase name=\"" + host(n) + "\"");
    if (at == std::string::npos) return "";
    return xml.substr(at, xml.find("</testcase>", at) - at);
  }
  // The verdict of the profile's rule `rule`.
  static nlohmann::json verdict(const nlohmann::json& report, const std::string& rule) {
    for (const auto& v : report["verdicts"])
      if (v["rule"] == rule) return v;
    ADD_FAILURE() << "no verdict for rule '" << rule << "' in " << report.dump();
    return {};
  }
  bool reshaped_ = false;
};

TEST_F(ClusterHostTcp, CheckNamesTheSlowNodeAloneAndPassesWhenNoLinkIsSlow) {
  auto r = check("slow");
  std::printf("%s\n", r.out.c_str());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto rep = report("slow");
  const auto nodes = verdict(rep, "no node with slow links");
  EXPECT_EQ(nodes["status"], "fail") << nodes.dump();
  EXPECT_EQ(verdict(rep, "every element right")["status"], "pass");
  EXPECT_EQ(verdict(rep, "same hardware on every node")["status"], "pass") << rep.dump();
  ASSERT_EQ(rep["bad"].size(), 1u) << rep["bad"].dump();
  EXPECT_EQ(rep["bad"][0]["host"], host(3));
  EXPECT_EQ(rep["bad"][0]["rule"], "no node with slow links");
  EXPECT_EQ(rep["bad"][0]["peer"], nullptr);
  // A quarter of the shaped rate, at most: the slow node's links are all capped by its own.
  EXPECT_LE(rep["bad"][0]["figure"].get<double>(), 1.1 * kSlowGbps);
  // One failing node testcase, node 3's; the other three pass.
  const std::string xml = junit("slow");
  const std::string blamed = "<failure message=\"FAIL: blamed by &apos;no node with slow links&apos;";  // as escaped
  EXPECT_NE(node_case(xml, 3).find(blamed), std::string::npos) << xml;
  for (int n : {1, 2, 4})
    EXPECT_NE(node_case(xml, n).find("no failed rule blames this node"), std::string::npos) << n << "\n" << xml;

  ASSERT_TRUE(reshaped_ = reshape(3, "1gbit")) << "tc could not re-shape node 3's link";
  r = check("even");
  std::printf("%s\n", r.out.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  rep = report("even");
  EXPECT_EQ(rep["status"], "pass") << rep.dump();
  EXPECT_TRUE(rep["bad"].empty()) << rep["bad"].dump();
  EXPECT_EQ(junit("even").find("<failure"), std::string::npos);
}

// The model's first check against the world: the same data-parallel step on
// two nodes joined by 500 Mbit/s and by 250 Mbit/s links. The measured
// communication share must rise as the link slows, and the model, given a
// sweep on the same link and the step's measured compute, must predict the
// measured communication within 15% and the step within 25%.
//
// The faster link is node 2's, slowed to 500 Mbit/s for this test (and put
// back after): at 1 Gbit/s the bottleneck is this 2-core VM's TCP stack, not
// the link, and the rate depends on what the run did before. The same 1 MiB
// all-reduce ran at 9.2 ms as a sweep's first row and at 10.9-11.8 ms after
// smaller rows (14 runs of 14; the step's own calls ran at 8.7 ms), so the
// model was 23% high on two of three pairs in one run. At 500 and 250 Mbit/s
// the row is the same whatever came before (20.0-21.2 ms, 36.8 ms).
//
// The model's network comes from a sweep, the step it is compared with is a
// second run: the machine's load may change between the two (the model was
// once 17.9% under the step; at a load average of 12 one pair had it 29.8%
// under, the next 14.6%). So the sweep is timed beside its step, in pairs, sweep then
// step, kTrials pairs per link, every one of them run, and each claim is judged
// on its median over the pairs (the communication's error, the step's error):
// one pair disturbed by the load does not decide it either way, and a model
// wrong by more than the bound misses it in most pairs, so in the median. (No
// pair is run again because an earlier one missed: that would be a retry until
// it passes.)
class ClusterStep : public Cluster {
 protected:
  void SetUp() override {
    Cluster::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(reshaped_ = reshape(2, "500mbit")) << "tc could not re-shape node 2's link";
  }
  void TearDown() override {
    if (reshaped_) reshape(2, "1gbit");  // the other tests need node 2 at 1 Gbit/s
    Cluster::TearDown();
  }
  bool reshaped_ = false;
  static constexpr int kTrials = 3;
  // The sweep prices the step's communication: that is the model's claim about the network, held to 15%.
  static constexpr double kCommBound = 0.15;
  // The whole overlapped step is held to 25%. Here compute and TCP share two host cores, so the overlap hides
  // less the busier the machine is, which no GPU cluster's step pays and the model does not price. .ci/run on
  // a clean clone, with a build beside it, saw step errors of -5.5%, -22.1% and -16.7% on the 1 Gbit link while
  // the communication stayed within 3-10% of the sweep's; two busy loops beside it gave -15% to -25%.
  static constexpr double kStepBound = 0.25;
  struct Measured {
    double exposed_share = 0;
    double comm_share = 0;
    double step_us = 0;
    double predicted_step_us = 0;
    double comm_us = 0;
    double predicted_comm_us = 0;
    double hidden_us = 0;
    double diff() const { return step_us > 0 ? (predicted_step_us - step_us) / step_us : 1e300; }
    double comm_diff() const { return comm_us > 0 ? (predicted_comm_us - comm_us) / comm_us : 1e300; }
  };
  // A link's pairs and, for each claim, the pair whose error on it is the median.
  struct Link {
    std::vector<Measured> pairs;
    Measured median_by(double (Measured::*error)() const) const {
      std::vector<Measured> sorted = pairs;
      std::sort(sorted.begin(), sorted.end(),
                [&](const Measured& x, const Measured& y) { return (x.*error)() < (y.*error)(); });
      return sorted[sorted.size() / 2];
    }
  };
  Measured step_between(int a, int b, int trial) {
    const std::string hosts = "--host " + address(a) + "," + address(b);
    // One pair's files each (an existing --out is refused without --overwrite).
    const std::string pair = std::to_string(a) + "-" + std::to_string(b) + "-" + std::to_string(trial);
    const std::string sweep = tmp_ + "/sweep-" + pair + ".jsonl", steps = tmp_ + "/step-" + pair + ".jsonl";
    // The step all-reduces 1,000,000-byte buckets, which the 512 KiB and 1 MiB rows bracket. It used 4 MB
    // buckets until a 4 MiB all-reduce over ob1/TCP turned out bimodal within a run (at 1 Gbit/s 35 or 62 ms, in
    // runs of calls): a sweep could catch one mode and the step the other (CI: the model 43% low on two pairs).
    // The fit reads out-of-place rows only, so only those are measured.
    auto r = test::run_process(mpirun_ + " -np 2 " + hosts + " " + FB_BINARY +
                               " run --backend mpi --ops all_reduce --placement out -b 256K -e 1M -f 2 -n 20 -w 1"
                               " --progress off --out " +
                               sweep);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    r = test::run_process(mpirun_ + " -np 2 " + hosts + " " + FB_BINARY + " step -w " FB_SOURCE_DIR
                          "/profiles/workloads/host-dp-2ranks.yaml --steps 4 --warmup 1 --compare-model --network " +
                          sweep + "@global --out " + steps);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::printf("%s\n", r.out.c_str());
    Measured m;
    for (const auto& l : fb::test::json_lines(steps)) {
      if (l["type"] == "step") {
        m.exposed_share = l["exposed_share"];
        m.comm_share = l["comm_share"];
        m.step_us = l["modes"]["overlapped"]["time_median_us"];
        m.comm_us = l["modes"]["comm_only"]["time_median_us"];
        m.hidden_us = l["hidden_us"];
      }
      if (l["type"] == "step_model" && l["basis"] == "measured compute") {
        m.predicted_step_us = l["step_us"];
        m.predicted_comm_us = l["comm_us"];
      }
    }
    return m;
  }
  // Every pair on the link.
  Link pairs_between(int a, int b) {
    Link link;
    for (int trial = 0; trial < kTrials; ++trial) {
      link.pairs.push_back(step_between(a, b, trial));
      const Measured& m = link.pairs.back();
      std::printf(
          "nodes %d-%d, pair %d: comm %.0f us, model %.0f us (%+.1f%%); step %.0f us, model %.0f us (%+.1f%%)\n", a, b,
          trial, m.comm_us, m.predicted_comm_us, 100 * m.comm_diff(), m.step_us, m.predicted_step_us, 100 * m.diff());
    }
    return link;
  }
};

TEST_F(ClusterStep, ShareRisesAsTheLinkSlowsAndTheModelHoldsTheCommunicationTo15Percent) {
  const Link faster = pairs_between(1, 2), slower = pairs_between(1, 3);
  const Measured fast = faster.median_by(&Measured::diff), slow = slower.median_by(&Measured::diff);
  ASSERT_GT(fast.step_us, 0);
  ASSERT_GT(slow.step_us, 0);
  std::printf(
      "500 Mbit: step %.0f us (model %.0f), exposed %.1f%%; 250 Mbit: step %.0f us (model %.0f), exposed "
      "%.1f%%\n",
      fast.step_us, fast.predicted_step_us, 100 * fast.exposed_share, slow.step_us, slow.predicted_step_us,
      100 * slow.exposed_share);
  EXPECT_GT(slow.comm_share, fast.comm_share);
  EXPECT_GT(slow.exposed_share, fast.exposed_share);
  // Over TCP the kernel moves the bytes: the overlap hides some of them.
  EXPECT_GT(slow.hidden_us, 0);
  for (const Link* link : {&faster, &slower}) {
    const Measured comm = link->median_by(&Measured::comm_diff), step = link->median_by(&Measured::diff);
    ASSERT_GT(comm.comm_us, 0);
    EXPECT_NEAR(comm.predicted_comm_us, comm.comm_us, kCommBound * comm.comm_us);
    EXPECT_NEAR(step.predicted_step_us, step.step_us, kStepBound * step.step_us);
  }
}

// A link that changes rate in the middle of a sweep: node 2's link drops from
// 1 Gbit/s to 100 Mbit/s once the 2 MiB row is in the record, and is back at
// 1 Gbit/s once the 4 MiB row is (a flap). A smoothness rule in `check` must
// fail on that record at 4 MiB, naming both ranks and their hosts, while it
// passes the same sweep on a steady link, where `run` warns of nothing. The rate is
// put back however the test ends (the other tests need node 2 fast). The
// sweep starts at 2 MiB: below it TBF's 512 KB burst lets the first bytes of
// each message through above the rate, and busbw falls by half from 256 KiB
// to 1 MiB on a steady link (measured here), which both would rightly flag.
class ClusterFlap : public Cluster {
 protected:
  ClusterFlap() { steady_links_ = false; }
  void TearDown() override {
    stop_ = true;
    if (watcher_.joinable()) watcher_.join();
    reshape(2, "1gbit");
    Cluster::TearDown();
  }
  // Whether the record at out() holds a measurement row of `bytes`.
  bool has_row(std::uint64_t bytes) const {
    std::ifstream in(out());
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("type", "") == "measurement" && j.value("bytes", std::uint64_t{0}) == bytes)
        return true;
    }
    return false;
  }
  // Slows node 2 after the 2 MiB row, restores it after the 4 MiB row. The
  // last sweep's record goes first: the watcher once read its 2 MiB row before
  // the next sweep removed it (under load, in CI), slowed the link before the
  // sweep began, and the flap covered 2 and 4 MiB, a step the rule rightly passed.
  void flap_during_next_sweep() {
    std::filesystem::remove(out());
    watcher_ = std::thread([this] {
      int stage = 0;
      while (!stop_ && stage < 2) {
        if (has_row(stage == 0 ? 2u << 20 : 4u << 20)) {
          reshaped_ok_ = reshape(2, stage == 0 ? "100mbit" : "1gbit") && reshaped_ok_;
          ++stage;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      stages_ = stage;
    });
  }
  test::ProcessResult sweep() const {
    return fabricbench("run --backend mpi --ops all_reduce --placement out -b 2M -e 16M -f 2 -n 5 -w 1", 2,
                       "--host " + address(1) + "," + address(2));
  }
  test::ProcessResult check(const std::string& dir) const {
    const std::string profile = tmp_ + "/smooth.yaml";
    std::ofstream(profile) << "name: smooth\nbackend: mpi\n"
                              "sweeps:\n  - {ops: [all_reduce], scopes: [global], minbytes: 2M, maxbytes: 16M}\n"
                              "rules:\n  - {name: smooth curve, kind: smoothness, op: all_reduce, max_jump: 5, "
                              "max_drop: 75%}\n";
    return test::run_process(std::string(FB_BINARY) + " check --profile " + profile + " --results " + out() +
                             " -q --out-dir " + tmp_ + "/" + dir);
  }
  std::thread watcher_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> reshaped_ok_{true};
  std::atomic<int> stages_{0};
};

TEST_F(ClusterFlap, CheckFailsAtTheSizeTheLinkFlappedNamingTheRanksWhileRunWarnsOnlyOfCliffs) {
  // The steady link first: the rule passes and run warns of nothing. The rule's margins (5x, 75%) sit above what
  // a loaded 2-core machine does to a steady 1 Gbit/s link (CI saw busbw fall 48% between sizes) and well below
  // the flap: 100 Mbit/s for one size is a 10x slower row (CI: 12.8x the trend, busbw down 94%). run warns only
  // of cliffs, falls that stay (core/cliff.hpp): a steady link has none, and a flap that climbs back at the next
  // size is the rule's to judge, not run's.
  auto r = sweep();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << "a steady 1 Gbit/s link has no cliff\n" << r.err;
  auto c = check("steady");
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;

  flap_during_next_sweep();
  r = sweep();
  stop_ = true;
  watcher_.join();
  ASSERT_EQ(stages_, 2) << "the watcher never saw the 2 MiB and 4 MiB rows";
  ASSERT_TRUE(reshaped_ok_) << "tc could not re-shape node 2's link";
  std::printf("%s\n%s\n", r.out.c_str(), r.err.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string ranks = "ranks 0 (" + host(1) + "), 1 (" + host(2) + ")";

  c = check("flapped");
  std::printf("%s\n", c.out.c_str());
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  std::ifstream in(tmp_ + "/flapped/check.json");
  const auto report = nlohmann::json::parse(in);
  ASSERT_EQ(report["verdicts"].size(), 1u);
  const auto& v = report["verdicts"][0];
  EXPECT_EQ(v["status"], "fail") << v.dump();
  const std::string reason = v["reason"];
  // Only the flapped size is off the curve: the jump there and the busbw fall into it, each naming the ranks.
  EXPECT_EQ(v["measured"], 2) << reason;
  std::stringstream items(reason);
  for (std::string item; std::getline(items, item, '|');) {
    const bool jump = item.find("at 4 MiB the time") != std::string::npos;
    const bool drop = item.find("busbw falls") != std::string::npos && item.find("at 2 MiB to") != std::string::npos &&
                      item.find("at 4 MiB (>") != std::string::npos;
    EXPECT_TRUE(jump || drop) << item;
    EXPECT_NE(item.find(ranks), std::string::npos) << item;
  }
}

// A link whose rate alternates while one row runs (node 2 at 1 Gbit/s for
// 0.5 s, then 100 Mbit/s for 2.5 s, over and over: about 18 fast iterations,
// then 9 slow ones; by hand, 65% at 27 ms and 35% at 267 ms, 79-89% of each
// mode within 3 spreads; with 0.2 s and 1 s, iterations caught mid-change
// left 53-65%, too few to call the parts modes):
// the row's times fall into two modes, and run reports both with their shares
// instead of one median; the same row on the steady link has one mode.
class ClusterBimodal : public ClusterFlap {
 protected:
  test::ProcessResult long_row() const {
    return fabricbench("run --backend mpi --ops all_reduce --placement out -b 2M -e 2M -n 80 -w 2 --median-ci 0", 2,
                       "--host " + address(1) + "," + address(2));
  }
  test::ProcessResult judge(const std::string& dir) const {
    const std::string profile = tmp_ + "/bimodal.yaml";
    std::ofstream(profile) << "name: bimodal\nbackend: mpi\n"
                              "sweeps:\n  - {ops: [all_reduce], scopes: [global], minbytes: 2M, maxbytes: 2M}\n"
                              "rules:\n  - {kind: bimodal}\n";
    return test::run_process(std::string(FB_BINARY) + " check --profile " + profile + " --results " + out() +
                             " -q --out-dir " + tmp_ + "/" + dir);
  }
  // Runs `command` while node 2's link alternates: 1 Gbit/s for 0.5 s, 100 Mbit/s for 2.5 s.
  template <class Command>
  test::ProcessResult while_flapping(Command command) {
    watcher_ = std::thread([this] {
      bool slow = false;
      while (!stop_) {
        reshaped_ok_ = reshape(2, slow ? "100mbit" : "1gbit") && reshaped_ok_;
        std::this_thread::sleep_for(std::chrono::milliseconds(slow ? 2500 : 500));
        slow = !slow;
      }
    });
    auto r = command();
    stop_ = true;
    watcher_.join();
    return r;
  }
  // The HTML report of the record at out(), as `report html` writes it.
  std::string html(const std::string& name) const {
    const std::string page = tmp_ + "/" + name + ".html";
    const auto r = test::run_process(std::string(FB_BINARY) + " report html " + out() + " -o " + page);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::ifstream in(page);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(ClusterBimodal, ALinkAlternatingDuringARowIsReportedWithBothModes) {
  auto r = long_row();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("bimodal"), std::string::npos) << "a steady link has one mode\n" << r.err;
  ASSERT_EQ(read_results(out()).measurements.size(), 1u);
  EXPECT_FALSE(read_results(out()).measurements[0].modes.has_value());
  auto c = judge("steady");
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_EQ(html("steady").find("<table class=\"modes\""), std::string::npos) << "one mode: no two-mode table";

  r = while_flapping([this] { return long_row(); });
  ASSERT_TRUE(reshaped_ok_) << "tc could not re-shape node 2's link";
  std::printf("%s\n", r.err.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Results res = read_results(out());
  ASSERT_EQ(res.measurements.size(), 1u);
  const auto& m = res.measurements[0];
  ASSERT_TRUE(m.modes.has_value()) << "median " << m.time.median_us << " us, min " << m.time.min_us << ", max "
                                   << m.time.max_us;
  // 2 MiB at 119.6 MB/s is about 17.5 ms; at a tenth of the rate about 10x that (9.4x measured by hand).
  EXPECT_GT(m.modes->high_us, 4 * m.modes->low_us);
  EXPECT_GE(m.modes->low_share, kModesMinShare);
  EXPECT_LE(m.modes->low_share, 1 - kModesMinShare);
  EXPECT_NE(r.err.find("warning: bimodal all_reduce/global mpi 2 MiB: "), std::string::npos) << r.err;
  c = judge("flapped");
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  EXPECT_NE(c.out.find("two modes"), std::string::npos) << c.out;
  // The HTML report lists the row under fabric health with both modes, as run's warning words them.
  const std::string page = html("flapped");
  EXPECT_NE(page.find("<section id=\"health\""), std::string::npos);
  const auto row = page.find("<tr data-op=\"all_reduce\" data-bytes=\"2097152\">");
  ASSERT_NE(row, std::string::npos) << "no two-mode row for all_reduce 2 MiB in the page";
  EXPECT_NE(page.find(modes_text(*m.modes), row), std::string::npos) << page.substr(row, 400);
}

// The same flapping link under `pairs`: one message per iteration (a 2 MiB
// exchange is then about 17.5 ms at 1 Gbit/s, 80 of them span two periods),
// no retest (--threshold 0). The pair is recorded with its two modes, pairs
// names the link, and the HTML report lists it.
TEST_F(ClusterBimodal, ALinkAlternatingDuringPairsIsReportedWithBothModes) {
  const auto r = while_flapping([this] {
    return fabricbench("pairs --size 2M --window 1 -n 80 -w 2 --threshold 0", 2,
                       "--host " + address(1) + "," + address(2));
  });
  ASSERT_TRUE(reshaped_ok_) << "tc could not re-shape node 2's link";
  std::printf("%s\n", r.out.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Results res = read_results(out());
  ASSERT_EQ(res.pairs.size(), 1u);
  const auto& p = res.pairs[0];
  ASSERT_TRUE(p.modes.has_value()) << "unidir " << p.unidir_ab_gbps.value_or(-1) << " GB/s";
  EXPECT_GT(p.modes->high_us, 4 * p.modes->low_us);
  EXPECT_NE(r.out.find("bimodal: link"), std::string::npos) << r.out;
  const std::string page = html("pairs");
  const auto row = page.find("<tr data-link=\"0-1\">");
  ASSERT_NE(row, std::string::npos) << "no two-mode row for the link in the page";
  EXPECT_NE(page.find(modes_text(*p.modes), row), std::string::npos) << page.substr(row, 400);
}

}  // namespace
}  // namespace fb

namespace fb {
namespace {

// TCP retransmissions land on the node whose link drops: node 2's own
// egress gets a TBF whose queue holds 8 KB (the shipped links queue 20 ms,
// 2.5 MB at 1 Gbit/s), so its bursts overflow it and node 2 resends what
// was dropped; node 1's sends queue at the switch and are not dropped. Each
// rank runs in its node's namespace, whose /proc/net/snmp counts that
// namespace's TCP alone: the counters lines put the retransmissions on node 2.
class ClusterCounters : public Cluster {
 protected:
  ClusterCounters() { steady_links_ = false; }  // node 2's link drops
  void TearDown() override {
    if (shaped_) {
      EXPECT_TRUE(reshape(2, "1gbit")) << "node 2's link left with its shallow queue";
    }
    Cluster::TearDown();
  }
  bool shallow_queue_on_node2() {
    shaped_ = true;
    return std::system(
               ("ip netns exec " + host(2) + " tc qdisc replace dev eth0 root tbf rate 200mbit burst 4kb limit 8kb")
                   .c_str()) == 0;
  }
  std::map<std::string, std::uint64_t> retransmits_by_host() const {
    std::map<std::string, std::uint64_t> by_host;
    for (const auto& c : read_results(out()).counters)
      if (c.counter == "tcp_retrans_segs" && c.delta) by_host[c.host] += *c.delta;
    return by_host;
  }
  test::ProcessResult sweep() const {
    return fabricbench("run --backend mpi --ops all_reduce --placement out -b 1M -e 2M -f 2 -n 5 -w 1 --median-ci 0", 2,
                       "--host " + address(1) + "," + address(2));
  }
  // Judges the record against at most `max` TCP retransmissions per GB moved.
  test::ProcessResult judge(const std::string& dir, double max = 0) const {
    const std::string profile = tmp_ + "/retransmits.yaml";
    std::ofstream(profile) << "name: retransmits\nbackend: mpi\n"
                              "sweeps:\n  - {ops: [all_reduce], scopes: [global], minbytes: 1M, maxbytes: 2M}\n"
                              "rules:\n  - {kind: counters, counter: tcp_retransmits_per_gb, max: "
                           << max << "}\n";
    return test::run_process(std::string(FB_BINARY) + " check --profile " + profile + " --results " + out() +
                             " -q --out-dir " + tmp_ + "/" + dir);
  }
  bool shaped_ = false;
};

// A bound between a clean link and a lossy one. TCP may resend a little even
// on the clean emulated links (their TBF queue of 20 ms can overflow): this
// sweep counted 0, 191 and 0 retransmits per GB moved in three runs here,
// against 907,580-917,180 per GB with node 2's shallow queue (the GB are the
// rows' bus bytes; each lost burst is resent in many segments). 50,000 per GB
// sits far from both.
constexpr double kRetransmitsPerGbBound = 50000;

TEST_F(ClusterCounters, RetransmitsLandOnTheNodeWhoseLinkDrops) {
  // The clean link first: the same sweep passes the bound.
  auto r = sweep();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto c = judge("clean", kRetransmitsPerGbBound);
  std::printf("%s\n", c.out.c_str());
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;

  ASSERT_TRUE(shallow_queue_on_node2()) << "tc could not shape node 2's link";
  r = sweep();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::printf("%s\n", r.err.c_str());
  auto by_host = retransmits_by_host();
  EXPECT_GT(by_host[host(2)], 0u) << "node 2 dropped its sends and never resent them?";
  EXPECT_GT(by_host[host(2)], 10 * by_host[host(1)]) << "node 1's sends were not dropped";
  EXPECT_NE(r.err.find("fabric health"), std::string::npos) << r.err;
  c = judge("dropped", kRetransmitsPerGbBound);
  std::printf("%s\n", c.out.c_str());  // the verdict's figures, for the record of this test's runs
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  std::ifstream in(tmp_ + "/dropped/check.json");
  const auto report = nlohmann::json::parse(in);
  // Node 2 is blamed, node-wide; node 1 only if it resent a little too, and then for less.
  double node2 = -1, node1 = 0;
  for (const auto& bad : report["bad"]) {
    EXPECT_EQ(bad["device"], "node");
    (bad["host"] == host(2) ? node2 : node1) = bad["figure"].get<double>();
  }
  EXPECT_GT(node2, node1) << report.dump(1);
}

}  // namespace
}  // namespace fb
