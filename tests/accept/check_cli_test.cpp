// `fabricbench check` end to end under mpirun: a profile that passes, one that
// fails on purpose, usage errors, --strict, baselines, judging a recorded
// run, and the mpirun wrapper script.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "fabricbench/core/record.hpp"
#include "junit_check.hpp"
#include "process.hpp"
#include "json_lines.hpp"

namespace fb {
namespace {

using test::mpirun;
using test::run_process;

// Small and quick: two sizes, few iterations, checked.
const char* kSweep = R"(backend: mpi
sweeps:
  - ops: [all_reduce, all_gather]
    minbytes: 4K
    maxbytes: 64K
    stepfactor: 16
    iters: 5
    warmup: 1
    check: true
)";

class CheckCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_check_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string profile(const std::string& name, const std::string& rules) const {
    std::ofstream(path(name + ".yaml")) << "name: " << name << "\n" << kSweep << "rules:\n" << rules;
    return path(name + ".yaml");
  }
  static std::string check(int ranks) {
    return "timeout 240 " + mpirun(ranks) + " " + FB_BINARY + " check --progress off";
  }
  // Saves base.jsonl from a run of `profile_path` (asserting that it ran);
  // `flags` go to that run (--timeout 0 for a baseline at MPI_THREAD_SINGLE).
  void save_baseline(const std::string& profile_path, const std::string& flags = "") const {
    ASSERT_EQ(run_process(check(2) + " --profile " + profile_path + " -q " + flags + " --out-dir " + path("a") +
                          " --save-baseline " + path("base.jsonl"))
                  .exit_code,
              0);
  }
  // A live run of `profile_path` into `out_dir`, judged against base.jsonl.
  test::ProcessResult judge_live(const std::string& profile_path, const std::string& out_dir,
                                 const std::string& flags = "") const {
    return run_process(check(2) + " --profile " + profile_path + " -q " + flags + " --out-dir " + path(out_dir) +
                       " --baseline " + path("base.jsonl"));
  }
  // A live run of `profile_path` into b/ is refused against base.jsonl: exit
  // 2, its output naming `why` (what differs between the two runs).
  void expect_refused(const std::string& profile_path, const std::string& why) const {
    const auto r = judge_live(profile_path, "b");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.out.find(why), std::string::npos) << r.out;
  }
  nlohmann::json json_file(const std::string& name) const {
    std::ifstream in(path(name));
    return nlohmann::json::parse(in, nullptr, false);
  }
  std::string dir_;
};

TEST_F(CheckCli, LocalSmokePassesAndWritesRecordJsonAndJunit) {
  const auto r = run_process(check(3) + " --profile local-smoke -q --out-dir " + path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("check local-smoke: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 failed"), std::string::npos) << r.out;
  const auto junit = test::junit_counts(path("out/junit.xml"));
  ASSERT_FALSE(junit.contains("problem")) << junit.dump();
  // The 7 rules, and one testcase for the one node the ranks ran on, which passes.
  EXPECT_EQ(junit["testsuite"]["tests"], "8");
  EXPECT_EQ(junit["testsuite"]["failures"], "0");
  EXPECT_EQ(junit["testsuite"]["errors"], "0");
  EXPECT_EQ(junit["cases"], 8);
  EXPECT_EQ(junit["node_names"], nlohmann::json(read_results(path("out/results.jsonl")).header.hosts));
  EXPECT_EQ(junit["node_names"].size(), 1u);
  const auto report = json_file("out/check.json");
  EXPECT_EQ(report["status"], "pass");
  EXPECT_EQ(report["exit_code"], 0);
  EXPECT_EQ(report["ranks"], 3);
  EXPECT_EQ(report["counts"]["pass"].get<int>() + report["counts"]["skip"].get<int>(), 7);
  const Results rec = read_results(path("out/results.jsonl"));
  EXPECT_TRUE(rec.complete);
  EXPECT_EQ(fb::test::json_lines(rec.path).front()["command"], "check");
  EXPECT_EQ(fb::test::json_lines(rec.path).front()["sweeps"].size(), 3u);  // collectives, spread, latency
  int checks = 0;
  int inventory = 0;
  for (const auto& line : fb::test::json_lines(rec.path)) {
    checks += line["type"] == "check";
    inventory += line["type"] == "inventory";
  }
  EXPECT_EQ(checks, 7);
  EXPECT_EQ(inventory, 3);  // one per rank, right after the header, as in a `run` record
  ASSERT_GE(fb::test::json_lines(rec.path).size(), 2u);
  EXPECT_EQ(fb::test::json_lines(rec.path)[1]["type"], "inventory");
  // Three ranks of one machine: the inventory rule is judged (not skipped) and
  // passes. Counted, so a profile without the rule fails here instead of
  // passing an empty loop.
  int inventory_rules = 0;
  for (const auto& v : report["verdicts"]) {
    if (v["rule"] == "same hardware on every node") {
      ++inventory_rules;
      EXPECT_EQ(v["status"], "pass") << v.dump();
    }
  }
  EXPECT_EQ(inventory_rules, 1) << report.dump();
  ASSERT_FALSE(rec.measurements.empty());
  for (const auto& m : rec.measurements) {
    ASSERT_EQ(m.rank_mean_us.size(), 3u) << m.op;  // the profile has a uniformity rule across ranks
    EXPECT_EQ(m.wrong, m.op == "pingpong" ? -1 : 0);
  }
}

TEST_F(CheckCli, AnImpossibleThresholdFailsWithExitOneAndNamesTheRule) {
  const std::string p = profile("impossible", R"(
  - {name: busbw beyond any machine, kind: absolute, op: all_reduce, size: 64K, metric: busbw, min: 1000 TB/s}
  - {name: element check, kind: correctness}
)");
  const auto r = run_process(check(2) + " --profile " + p + " -q --out-dir " + path("out"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("busbw beyond any machine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  const auto junit = test::junit_counts(path("out/junit.xml"));
  ASSERT_FALSE(junit.contains("problem")) << junit.dump();
  // Two rules and the node; the busbw rule blames no node, so the node passes.
  EXPECT_EQ(junit["testsuite"]["tests"], "3");
  EXPECT_EQ(junit["testsuite"]["failures"], "1");
  EXPECT_EQ(junit["node_failure_cases"], 0);
  const std::string failure = junit["failure_text"][0];
  EXPECT_NE(failure.find("expected: >= 1000 TB/s"), std::string::npos) << failure;
  EXPECT_NE(failure.find("measured: "), std::string::npos) << failure;
  EXPECT_EQ(json_file("out/check.json")["status"], "fail");
  // What the launch scripts act on, read through the binary.
  const auto verdict = run_process(std::string(FB_BINARY) + " report verdict " + path("out/check.json"));
  EXPECT_EQ(verdict.exit_code, 0) << verdict.err;
  EXPECT_EQ(verdict.out, "fail 1\n");
}

// What drain scripts act on (scripts/slurm/drain-blamed.sh): the nodes the
// failed rules blame, one line each, read through the binary. A rule that
// blames no node (a busbw floor) names a node only with --or-host, for a
// check that ran on that node alone; a pass blames nothing; a "bad" entry
// without its host is refused, never read as "nobody to drain".
TEST_F(CheckCli, ReportBlamedNamesTheNodesToDrain) {
  const std::string p = profile("blame", R"(
  - {name: busbw beyond any machine, kind: absolute, op: all_reduce, size: 64K, metric: busbw, min: 1000 TB/s}
  - {name: element check, kind: correctness}
)");
  const auto r = run_process(check(2) + " --profile " + p + " -q --out-dir " + path("out") +
                             " --inject corrupt:rank=1,op=all_reduce");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const Results rec = read_results(path("out/results.jsonl"));
  const std::string host = rec.header.hosts.at(0);
  const std::string blamed = std::string(FB_BINARY) + " report blamed ";
  const auto plain = run_process(blamed + path("out/check.json"));
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(std::count(plain.out.begin(), plain.out.end(), '\n'), 1) << plain.out;
  EXPECT_EQ(plain.out.rfind(host + "\telement check (", 0), 0u) << plain.out;
  EXPECT_EQ(plain.out.find("busbw"), std::string::npos) << plain.out;

  const auto alone = run_process(blamed + "--or-host elsewhere " + path("out/check.json"));
  EXPECT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_NE(alone.out.find("\nelsewhere\tbusbw beyond any machine ("), std::string::npos) << alone.out;

  const auto ok =
      run_process(check(2) + " --profile " + profile("ok", "  - {name: element check, kind: correctness}\n") +
                  " -q --out-dir " + path("ok"));
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  const auto none = run_process(blamed + "--or-host elsewhere " + path("ok/check.json"));
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "");

  auto doc = json_file("out/check.json");
  doc["bad"][0].erase("host");
  std::ofstream(path("hostless.json")) << doc.dump();
  const auto refused = run_process(blamed + path("hostless.json"));
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find("host"), std::string::npos) << refused.err;
}

// A check.json cut short (a full disk, a copy interrupted) holds no verdict:
// `report verdict` refuses it, naming the file, instead of reading a pass.
TEST_F(CheckCli, ReportVerdictReadsAPassAndRefusesACheckJsonCutShort) {
  const auto r =
      run_process(check(2) + " --profile " + profile("ok", "  - {name: element check, kind: correctness}\n") +
                  " -q --out-dir " + path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string verdict = std::string(FB_BINARY) + " report verdict ";
  const auto pass = run_process(verdict + path("out/check.json"));
  EXPECT_EQ(pass.exit_code, 0) << pass.err;
  EXPECT_EQ(pass.out, "pass 0\n");
  std::ifstream in(path("out/check.json"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto cut = text.find("\"exit_code\"");
  ASSERT_NE(cut, std::string::npos);
  std::ofstream(path("cut.json")) << text.substr(0, cut) << "\"verdicts\": []}";
  const auto refused = run_process(verdict + path("cut.json"));
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find("cut.json"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("exit_code"), std::string::npos) << refused.err;
}

// On one rank a collective crosses no path (its busbw is 0 by definition):
// a spec rule says so instead of failing the row at -100% of the peak (the
// one-H200 device check, 2026-12-04).
TEST_F(CheckCli, ASpecRuleOnOneRankIsNotJudgedAndSaysWhy) {
  const std::string p =
      profile("one", "  - {name: near peak, kind: spec, op: all_reduce, scope: global, size: 64K, min: 0.5 of spec}\n");
  const auto r = run_process(check(1) + " --profile " + p + " --out-dir " + path("out"));
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("every matching row ran on one rank: all_reduce there moves no data between ranks"),
            std::string::npos)
      << r.out << r.err;
  EXPECT_EQ(r.out.find("-100.0%"), std::string::npos) << r.out;
}

// Issue 35: a profile for several nodes on one node measures nothing. That
// is a launch to change, exit 2, not a cluster that failed its rules (exit 1
// with every rule "not judged"), and check.json says the same as the exit.
TEST_F(CheckCli, ANetworkProfileOnOneNodeIsRefusedWithExitTwoAndSaysSoInCheckJson) {
  const auto r = run_process(check(2) + " --profile host-tcp -q --out-dir " + path("out"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("fabricbench check: profile host-tcp measures between nodes only"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("launch it on two or more nodes"), std::string::npos) << r.err;
  const auto verdict = json_file("out/check.json");
  EXPECT_EQ(verdict["status"], "error") << verdict.dump();
  EXPECT_EQ(verdict["exit_code"], 2) << verdict.dump();
  EXPECT_NE(verdict["run_error"].get<std::string>().find("refused before measuring"), std::string::npos);
}

TEST_F(CheckCli, PairsOnOneNodeAreSkippedWithTheReasonNotMeasured) {
  std::ofstream(path("links.yaml")) << "name: links\n" << kSweep << "pairs: {size: 64K, iters: 3}\n"
                                    << "rules:\n  - {name: no weak link, kind: pairs, min: 0.8 of median}\n";
  // The rule is not optional: what the run cannot answer fails the check.
  const auto r = run_process(check(2) + " --profile " + path("links.yaml") + " -q --out-dir " + path("out"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("there are no node pairs to measure"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("1 not judged"), std::string::npos) << r.out;
  const auto verdict = json_file("out/check.json")["verdicts"][0];
  EXPECT_EQ(verdict["status"], "fail");
  EXPECT_NE(verdict["reason"].get<std::string>().find("not judged: no pair lines in this run"), std::string::npos)
      << verdict.dump();
  EXPECT_EQ(fb::test::json_lines(path("out/results.jsonl")).front()["pairs"]["size_bytes"], 65536);
  // --allow-skipped: the user accepts what the run could not judge.
  const auto allowed = run_process(check(2) + " --profile " + path("links.yaml") + " -q --allow-skipped --out-dir " +
                                   path("allowed"));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  const auto skipped = json_file("allowed/check.json")["verdicts"][0];
  EXPECT_EQ(skipped["status"], "skip");
  EXPECT_EQ(skipped["reason"], "no pair lines in this run");
  const auto strict =
      run_process(check(2) + " --profile " + path("links.yaml") + " -q --strict --out-dir " + path("strict"));
  EXPECT_EQ(strict.exit_code, 2) << strict.out << strict.err;
}

TEST_F(CheckCli, AGpuProfileWithoutItsBackendIsAUsageError) {
  const auto r = run_process(check(2) + " --profile h100-8x-ndr400 --out-dir " + path("out"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("backend nccl"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("out"))) << "nothing is written for a profile that cannot run";
}

TEST_F(CheckCli, StrictTurnsAnUnmeasuredSizeIntoAnError) {
  const std::string p = profile("strict", R"(
  - {name: size the sweep skipped, kind: absolute, op: all_reduce, size: 64M, metric: busbw, min: 1 MB/s}
)");
  const auto lenient = run_process(check(2) + " --profile " + p + " -q --allow-skipped --out-dir " + path("a"));
  EXPECT_EQ(lenient.exit_code, 0) << lenient.out << lenient.err;
  EXPECT_NE(lenient.out.find("size 64 MiB was not measured"), std::string::npos) << lenient.out;
  const auto strict = run_process(check(2) + " --profile " + p + " -q --strict --out-dir " + path("b"));
  EXPECT_EQ(strict.exit_code, 2) << strict.out << strict.err;
  EXPECT_NE(strict.out.find("--strict: size 64 MiB was not measured"), std::string::npos) << strict.out;
  const auto junit = test::junit_counts(path("b/junit.xml"));
  EXPECT_EQ(junit["testsuite"]["errors"], "1") << junit.dump();
}

TEST_F(CheckCli, BaselinesAreSavedComparedAndRefusedWhenTheyDoNotMatch) {
  ASSERT_NO_FATAL_FAILURE(save_baseline(profile("plain", "  - {kind: correctness}\n")));
  const Results base = read_results(path("base.jsonl"));
  ASSERT_TRUE(base.complete);
  const std::string relative = profile("relative", R"(
  - {name: against the baseline, kind: baseline, op: all_reduce, size: 64K, metric: busbw, min: 0.001 of baseline}
)");
  // A live run against it: the bound is 0.001 x the baseline's figure for the
  // deciding row (whether this loaded machine passes it is not the point).
  const auto live = judge_live(relative, "b");
  ASSERT_TRUE(live.exit_code == 0 || live.exit_code == 1) << live.out << live.err;
  const auto verdict = json_file("b/check.json")["verdicts"][0];
  bool paired = false;
  for (const auto& m : base.measurements)
    if (m.op == "all_reduce" && m.bytes == verdict["row"]["bytes"] && m.in_place == verdict["row"]["in_place"])
      paired = std::abs(verdict["expected"].get<double>() - 0.001 * m.busbw_gbps) < 1e-12;
  EXPECT_TRUE(paired) << verdict.dump();

  // The same record as run and baseline: the ratio is exactly 1.
  const std::string one =
      profile("one", "  - {kind: baseline, op: all_reduce, size: 64K, metric: busbw, min: 1 of baseline}\n");
  const std::string more =
      profile("more", "  - {kind: baseline, op: all_reduce, size: 64K, metric: busbw, min: 1.01 of baseline}\n");
  const std::string judge = std::string(FB_BINARY) + " check --results " + path("base.jsonl") + " --baseline " +
                            path("base.jsonl") + " --overwrite --out-dir " + path("c") + " --profile ";
  EXPECT_EQ(run_process(judge + one).exit_code, 0);
  EXPECT_EQ(run_process(judge + more).exit_code, 1);

  const auto missing = run_process(check(2) + " --profile " + relative + " --out-dir " + path("d"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("give --baseline FILE"), std::string::npos) << missing.err;
  const auto ranks = run_process(check(3) + " --profile " + relative + " --out-dir " + path("e") + " --baseline " +
                                 path("base.jsonl"));
  EXPECT_EQ(ranks.exit_code, 2);
  EXPECT_NE(ranks.err.find("recorded with 2 ranks and this job has 3"), std::string::npos) << ranks.err;
  const auto unreadable = run_process(check(2) + " --profile " + relative + " --out-dir " + path("f") + " --baseline " +
                                      path("nope.jsonl"));
  EXPECT_EQ(unreadable.exit_code, 2);
  EXPECT_NE(unreadable.err.find("nope.jsonl"), std::string::npos) << unreadable.err;
}

// A baseline saved without the watchdog ran MPI at MPI_THREAD_SINGLE, which
// with Open MPI alone makes small messages faster: judged against a watched
// run (FUNNELED) it would flag the library's locks as a regression. Refused,
// saying what differs and what to give.
TEST_F(CheckCli, ABaselineWhoseMpiRanAtAnotherThreadLevelIsReportedNotCompared) {
  ASSERT_NO_FATAL_FAILURE(save_baseline(profile("plain", "  - {kind: correctness}\n"), "--timeout 0"));
  const std::string relative = profile("relative", R"(
  - {kind: baseline, op: all_reduce, size: 64K, metric: busbw, min: 0.001 of baseline}
)");
  // The watchdog on a thread of the rank runs MPI at FUNNELED (in its own process, at SINGLE).
  ::setenv("FABRICBENCH_WATCHDOG", "thread", 1);
  expect_refused(relative, "MPI ran at MPI_THREAD_SINGLE in the baseline, MPI_THREAD_FUNNELED in this run");
  ::unsetenv("FABRICBENCH_WATCHDOG");
  // The same level on both sides is compared (the control).
  const auto alike = judge_live(relative, "c", "--timeout 0");
  EXPECT_TRUE(alike.exit_code == 0 || alike.exit_code == 1) << alike.out << alike.err;
}

// A baseline from before schema 1.20 timed iterations under 50 us one by one,
// a run since times them in groups of their mean: its small rows' medians and
// tails are lower by the timing alone. This binary writes only 1.20, so the
// baseline it saved is marked 1.19 by hand: what an older binary wrote.
TEST_F(CheckCli, ABaselineThatTimedShortIterationsOneByOneIsReportedNotCompared) {
  ASSERT_NO_FATAL_FAILURE(save_baseline(profile("plain", "  - {kind: correctness}\n")));
  std::string text;
  {
    std::ifstream in(path("base.jsonl"));
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string now = "\"schema_version\":\"" + schema_version() + "\"";
  ASSERT_NE(text.find(now), std::string::npos);
  text.replace(text.find(now), now.size(), "\"schema_version\":\"1.19\"");
  std::ofstream(path("base.jsonl"), std::ios::trunc) << text;
  const std::string relative = profile("relative", R"(
  - {kind: baseline, op: all_reduce, size: 64K, metric: busbw, min: 0.001 of baseline}
)");
  expect_refused(relative, "the baseline timed iterations under 50 us one by one, this run in groups");
}

TEST_F(CheckCli, ABaselineWithOtherOpsIsReportedNotCompared) {
  std::ofstream(path("other.yaml")) << "name: other\nbackend: mpi\nsweeps:\n  - {ops: [sendrecv], minbytes: 64K, "
                                       "maxbytes: 64K, iters: 3, check: true}\nrules:\n  - {kind: correctness}\n";
  ASSERT_NO_FATAL_FAILURE(save_baseline(path("other.yaml")));
  const std::string relative = profile("relative", R"(
  - {kind: baseline, op: all_reduce, size: 64K, metric: busbw, min: 0.5 of baseline}
)");
  expect_refused(relative, "ops measured: sendrecv in the baseline, all_gather, all_reduce in this run");
}

TEST_F(CheckCli, JudgesARecordedRunWithoutRunningIt) {
  const std::string fixtures = std::string(FB_SOURCE_DIR) + "/tests/accept/fixtures/";
  const auto r = run_process(std::string(FB_BINARY) + " check --profile local-smoke --results " + fixtures +
                             "local-smoke-np4.jsonl --out-dir " + path("out"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(path("out/junit.xml")));
  EXPECT_FALSE(std::filesystem::exists(path("out/results.jsonl")));
  EXPECT_EQ(json_file("out/check.json")["results"], fixtures + "local-smoke-np4.jsonl");
  const auto bad = run_process(std::string(FB_BINARY) + " check --profile local-smoke --results " + path("nope.jsonl") +
                               " --out-dir " + path("out2"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("nope.jsonl"), std::string::npos) << bad.err;
}

// Issue 35: a record no rule can judge (topo here, written by the binary in
// the test) was judged, every rule failed, and check exited 1 as if the
// cluster had failed; it is input of the wrong kind: exit 2, saying so.
TEST_F(CheckCli, ARecordOfAnotherKindIsExitTwoNamingItsCommand) {
  ASSERT_EQ(run_process(mpirun(2) + " " + FB_BINARY + " topo --out " + path("topo.jsonl")).exit_code, 0);
  const auto r = run_process(std::string(FB_BINARY) + " check --profile local-smoke -q --results " +
                             path("topo.jsonl") + " --out-dir " + path("out"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--results '" + path("topo.jsonl") + "' is the record of `fabricbench topo`, which no rule "
                       "judges; give the record of a run, pairs, check or report import"),
            std::string::npos)
      << r.err;
}

// issue 17: a record that did not finish was judged on what it had
// ("1 passed, 0 failed, 6 skipped", exit 0). It is incomplete: exit 3, never
// a pass, whatever its rules say; check.json and junit.xml say so.
TEST_F(CheckCli, ARecordThatDidNotFinishIsJudgedIncomplete) {
  const std::string fixture = std::string(FB_SOURCE_DIR) + "/tests/accept/fixtures/local-smoke-np4.jsonl";
  std::vector<std::string> lines;
  {
    std::ifstream in(fixture);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  ASSERT_NE(lines.back().find("\"summary\""), std::string::npos);
  const auto write = [&](const std::string& name, std::size_t keep, const std::string& last) {
    std::ofstream out(path(name));
    for (std::size_t i = 0; i < keep; ++i) out << lines[i] << "\n";
    out << last;
  };
  const auto closing = [](const std::string& status) {
    return nlohmann::json{{"type", "summary"}, {"status", status}, {"reason", "rank 1 stopped"}, {"exit_code", 3}}
               .dump() + "\n";
  };
  // The summary's early-end statuses, no summary, the header alone, and a cut last line.
  for (const std::string status : {"hang", "rank_lost", "error", "killed"}) write(status + ".jsonl", lines.size() - 1, closing(status));
  write("nosummary.jsonl", lines.size() - 1, "");
  write("header.jsonl", 1, "");
  write("cut.jsonl", lines.size() - 1, lines.back().substr(0, 20));
  for (const std::string name : {"hang", "rank_lost", "error", "killed", "nosummary", "header", "cut"}) {
    const auto r = run_process(std::string(FB_BINARY) + " check --profile local-smoke -q --results " +
                               path(name + ".jsonl") + " --out-dir " + path("out-" + name));
    EXPECT_EQ(r.exit_code, 3) << name << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("INCOMPLETE"), std::string::npos) << name << "\n" << r.out;
    EXPECT_EQ(r.out.find("exit code 0"), std::string::npos) << name << "\n" << r.out;
    const auto report = json_file("out-" + name + "/check.json");
    EXPECT_EQ(report["status"], "incomplete") << name;
    EXPECT_EQ(report["exit_code"], 3) << name;
    const auto junit = test::junit_counts(path("out-" + name + "/junit.xml"));
    // The run's testcase, every rule's and the record's one node's, each an error.
    ASSERT_FALSE(report["verdicts"].empty()) << name;
    EXPECT_EQ(junit["node_names"], nlohmann::json({"vm"})) << name << junit.dump();
    EXPECT_EQ(junit["testsuite"]["errors"], std::to_string(report["verdicts"].size() + 2)) << name << junit.dump();
    EXPECT_EQ(junit["testsuite"]["tests"], junit["testsuite"]["errors"]) << name << junit.dump();
  }
  // The whole record, as it finished: judged, and it passes.
  EXPECT_EQ(run_process(std::string(FB_BINARY) + " check --profile local-smoke -q --results " + fixture +
                        " --out-dir " + path("out-whole"))
                .exit_code,
            0);
}

// issue 17: check into a folder that holds an earlier check's outputs
// replaced them silently; now refused unless --overwrite.
TEST_F(CheckCli, ARerunIntoTheSameFolderNeedsOverwrite) {
  const std::string fixture = std::string(FB_SOURCE_DIR) + "/tests/accept/fixtures/local-smoke-np4.jsonl";
  const std::string judge =
      std::string(FB_BINARY) + " check --profile local-smoke -q --results " + fixture + " --out-dir " + path("out");
  ASSERT_EQ(run_process(judge).exit_code, 0);
  const auto again = run_process(judge);
  EXPECT_EQ(again.exit_code, 2) << again.out << again.err;
  EXPECT_NE(again.err.find("exists: give --overwrite"), std::string::npos) << again.err;
  EXPECT_EQ(run_process(judge + " --overwrite").exit_code, 0);
}

// issue 17: a link planted where check writes (results.jsonl, check.json)
// made root overwrite the link's target; and a planted `check.json.tmp`
// link was written through.
TEST_F(CheckCli, PlantedLinksAreRefusedOrNeverFollowed) {
  const std::string target = path("precious");
  std::ofstream(target) << "keep me\n";
  const std::string fixture = std::string(FB_SOURCE_DIR) + "/tests/accept/fixtures/local-smoke-np4.jsonl";
  std::filesystem::create_directories(path("a"));
  std::filesystem::create_symlink(target, path("a/check.json"));
  const auto linked = run_process(std::string(FB_BINARY) + " check --profile local-smoke -q --overwrite --results " +
                                  fixture + " --out-dir " + path("a"));
  EXPECT_EQ(linked.exit_code, 2) << linked.err;
  EXPECT_NE(linked.err.find("symbolic link"), std::string::npos) << linked.err;
  std::filesystem::create_directories(path("b"));
  std::filesystem::create_symlink(target, path("b/check.json.tmp"));
  std::filesystem::create_symlink(target, path("b/junit.xml.tmp"));
  const auto temps = run_process(std::string(FB_BINARY) + " check --profile local-smoke -q --results " + fixture +
                                 " --out-dir " + path("b"));
  EXPECT_EQ(temps.exit_code, 0) << temps.err;
  EXPECT_EQ(json_file("b/check.json")["status"], "pass");
  std::ifstream in(target);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "keep me\n");
}

// issue 17: an --out-dir others can write (without the sticky bit) or that
// belongs to another user is refused: someone could plant links in it.
TEST_F(CheckCli, AnOutDirOthersCanWriteIsRefused) {
  const std::string fixture = std::string(FB_SOURCE_DIR) + "/tests/accept/fixtures/local-smoke-np4.jsonl";
  const std::string judge = std::string(FB_BINARY) + " check --profile local-smoke -q --results " + fixture;
  std::filesystem::create_directories(path("open"));
  std::filesystem::permissions(path("open"), std::filesystem::perms::all);  // 0777
  const auto open = run_process(judge + " --out-dir " + path("open"));
  EXPECT_EQ(open.exit_code, 2) << open.err;
  EXPECT_NE(open.err.find("writable by everyone and not sticky"), std::string::npos) << open.err;
  std::filesystem::permissions(path("open"), std::filesystem::perms::sticky_bit, std::filesystem::perm_options::add);
  EXPECT_EQ(run_process(judge + " --out-dir " + path("open")).exit_code, 0);  // like /tmp
  std::filesystem::create_directories(path("theirs"));
  if (::geteuid() == 0 && ::chown(path("theirs").c_str(), 65534, 65534) == 0) {
    const auto theirs = run_process(judge + " --out-dir " + path("theirs"));
    EXPECT_EQ(theirs.exit_code, 2) << theirs.err;
    EXPECT_NE(theirs.err.find("belongs to another user"), std::string::npos) << theirs.err;
  } else {
    std::printf("[ note ] another user's folder not tried: needs root to chown\n");
  }
}

struct BadProfile {
  const char* name;
  const char* rules;
  const char* message;
};
void PrintTo(const BadProfile& b, std::ostream* os) { *os << b.rules; }

class CheckCliBadProfile : public CheckCli, public ::testing::WithParamInterface<BadProfile> {};

TEST_P(CheckCliBadProfile, ExitsTwoWithOneMessageNamingTheLine) {
  const std::string p = profile("bad", GetParam().rules);
  const auto r = run_process(check(2) + " --profile " + p + " --out-dir " + path("out"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 12"), std::string::npos) << r.err;
  const auto first = r.err.find("fabricbench check:");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("fabricbench check:", first + 1), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("out")));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CheckCliBadProfile,
    ::testing::Values(
        BadProfile{"UnknownKey", "  - {kind: correctness, colour: red}\n", "unknown key 'colour'"},
        BadProfile{"UnknownOp", "  - {kind: latency, op: all_reduse, size: 8, max: 1 ms}\n", "'all_reduse' is unknown"},
        BadProfile{"UnknownMetric", "  - {kind: absolute, op: all_reduce, size: 4K, metric: speed, min: 1 GB/s}\n",
                   "'speed' is unknown"},
        BadProfile{"UnknownUnit", "  - {kind: latency, op: all_reduce, size: 4K, max: 3 fortnights}\n",
                   "unknown unit 'fortnights'"},
        BadProfile{"NoUnit", "  - {kind: absolute, op: all_reduce, size: 4K, metric: busbw, min: 3}\n", "has no unit"}),
    [](const auto& info) { return info.param.name; });

TEST_F(CheckCli, ListsTheShippedProfiles) {
  const auto r = run_process(std::string(FB_BINARY) + " check --list-profiles");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"h100-8x-ndr400", "a100-8x-hdr200", "pcie-gpus-25gbe", "generic-spec", "local-smoke",
                           "host-tcp"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
  EXPECT_EQ(r.out.find("does not parse"), std::string::npos) << r.out;
}

TEST_F(CheckCli, TheMpirunWrapperWritesTheSameOutputs) {
  std::ofstream(path("hosts")) << "localhost slots=2\n";
  const auto r = run_process("FABRICBENCH=" + std::string(FB_BINARY) + " " + FB_SOURCE_DIR +
                             "/scripts/acceptance-mpirun.sh --hostfile " + path("hosts") +
                             " --np 2 --time 4 local-smoke " + path("out") + " -- -q");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
  for (const char* f : {"results.jsonl", "check.json", "junit.xml"})
    EXPECT_TRUE(std::filesystem::exists(path("out/") + f)) << f;
  const auto usage = run_process(std::string(FB_SOURCE_DIR) + "/scripts/acceptance-mpirun.sh local-smoke");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("--hostfile"), std::string::npos) << usage.err;
}

// A launch that never starts fabricbench (here a flag mpirun refuses) judged
// nothing: "nothing ran", exit 3, even where an earlier check's check.json
// (a PASS) is still in the folder.
TEST_F(CheckCli, TheMpirunWrapperSaysNothingRanWhenTheLaunchFails) {
  std::ofstream(path("hosts")) << "localhost slots=2\n";
  std::filesystem::create_directories(path("out"));
  std::ofstream(path("out/check.json")) << "{\n  \"status\": \"pass\",\n  \"exit_code\": 0\n}\n";
  const auto r = run_process("FB_MPIRUN_ARGS=--no-such-mpirun-flag FABRICBENCH=" + std::string(FB_BINARY) + " " +
                             FB_SOURCE_DIR + "/scripts/acceptance-mpirun.sh --hostfile " + path("hosts") +
                             " --np 2 --time 4 local-smoke " + path("out") + " -- -q --overwrite");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing ran: mpirun exit "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("verdict: PASS"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fb

namespace fb {
namespace {

// `check --quote`: the quote's promises judged beside the profile's rules.
class CheckQuoteCli : public CheckCli {
 protected:
  std::string quote(const std::string& network, int gpus_per_node, int nodes) const {
    std::ofstream(path("quotes.yaml")) << "quotes:\n  - {name: sold, gpu: h100-sxm, gpus_per_node: " << gpus_per_node
                                       << ", nodes: " << nodes << ", network: " << network
                                       << ", price_per_gpu_hour: 3}\n";
    return path("quotes.yaml");
  }
  // The verdict of the rule whose name holds `part`, or null.
  static nlohmann::json verdict(const nlohmann::json& report, const std::string& part) {
    for (const auto& v : report["verdicts"])
      if (v["rule"].get<std::string>().find(part) != std::string::npos) return v;
    return nullptr;
  }
};

// This machine (no GPU, one node, no 400G IB) is not what an 8 x H100 +
// 8 x 400G IB quote on 2 nodes sells: exit 1, each broken promise named.
TEST_F(CheckQuoteCli, AQuoteThisMachineCannotMeetFailsNamingEachPromise) {
  const std::string p = profile("q", "  - {name: element check, kind: correctness}\n");
  const auto r = run_process(check(2) + " --profile " + p + " --quote " + quote("8x400g-ndr-ib", 8, 2) +
                             " --quote-name sold -q --out-dir " + path("out"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = json_file("out/check.json");
  EXPECT_EQ(report["status"], "fail");
  EXPECT_EQ(verdict(report, "element check")["status"], "pass");
  const auto gpu = verdict(report, "quote sold: GPU NVIDIA H100 80GB HBM3 (gpus.yaml h100-sxm nvml_names)");
  ASSERT_FALSE(gpu.is_null()) << report.dump();
  EXPECT_EQ(gpu["status"], "fail");
  EXPECT_NE(gpu["reason"].get<std::string>().find("not judged: no inventory line names a GPU"), std::string::npos)
      << gpu.dump();
  const auto gpus = verdict(report, "quote sold: 8 GPUs per node");
  EXPECT_EQ(gpus["status"], "fail") << report.dump();
  EXPECT_EQ(gpus["measured"], 0);
  const auto nics = verdict(report, "quote sold: 8 NICs per node at 400 Gbit/s (networks.yaml 400g-ndr-ib");
  EXPECT_EQ(nics["status"], "fail") << report.dump();
  EXPECT_EQ(nics["measured"], 0);
  const auto nodes = verdict(report, "quote sold: 2 nodes");
  EXPECT_EQ(nodes["status"], "fail") << report.dump();
  EXPECT_EQ(nodes["measured"], 1);
  // The profile measures no all_reduce between nodes: the busbw promise is not judged.
  const auto busbw = verdict(report, "quote sold: all_reduce busbw inter at 1 GiB >= 40 GB/s");
  ASSERT_FALSE(busbw.is_null()) << report.dump();
  EXPECT_EQ(busbw["status"], "fail") << busbw.dump();
  const auto junit = test::junit_counts(path("out/junit.xml"));
  EXPECT_EQ(junit["testsuite"]["failures"], "5") << junit.dump();
  int named = 0;
  for (const auto& n : junit["names"]) named += n.get<std::string>().rfind("quote sold: ", 0) == 0;
  EXPECT_EQ(named, 5) << junit.dump();
}

// The network's busbw promise judged on rows this check measured: 2 local
// ranks as 2 nodes (shared memory, some GB/s between them) meet what one
// 10GbE port per GPU promises (0.80 of 1.25 GB/s) and miss what one 400G
// NDR port promises (0.80 of 50 GB/s).
TEST_F(CheckQuoteCli, TheBusbwPromiseIsJudgedOnTheRowsBetweenNodes) {
  std::ofstream(path("net.yaml"))
      << "name: net\nbackend: mpi\nsweeps:\n"
         "  - {ops: [all_reduce], scopes: [inter], minbytes: 256K, maxbytes: 1M, iters: 20, check: true}\n"
         "rules:\n  - {name: element check, kind: correctness}\n";
  const std::string launch = "timeout 240 " + mpirun(2) + " -x FABRICBENCH_RANKS_PER_NODE=1 " + FB_BINARY +
                             " check --progress off -q --profile " + path("net.yaml") + " --quote-name sold ";
  const auto slow = run_process(launch + "--quote " + quote("1x10gbe", 1, 2) + " --out-dir " + path("tcp"));
  const auto tcp = verdict(json_file("tcp/check.json"), "quote sold: all_reduce busbw inter at 1 MiB >= 1 GB/s");
  ASSERT_FALSE(tcp.is_null()) << slow.out << slow.err;
  EXPECT_EQ(tcp["status"], "pass") << tcp.dump();
  EXPECT_GE(tcp["measured"].get<double>(), 1.0) << tcp.dump();
  const auto fast = run_process(launch + "--quote " + quote("1x400g-ndr-ib", 1, 2) + " --out-dir " + path("ib"));
  EXPECT_EQ(fast.exit_code, 1) << fast.out << fast.err;
  const auto ib = verdict(json_file("ib/check.json"), "quote sold: all_reduce busbw inter at 1 MiB >= 40 GB/s");
  ASSERT_FALSE(ib.is_null()) << fast.out;
  EXPECT_EQ(ib["status"], "fail") << ib.dump();
  EXPECT_LT(ib["measured"].get<double>(), 40.0) << ib.dump();
}

// A quote naming a preset fabricbench does not know is refused before
// anything runs: exit 2, naming the quote, the key and the names known.
TEST_F(CheckQuoteCli, AnUnknownPresetOrQuoteIsExitTwoNamingIt) {
  const std::string p = profile("q", "  - {name: element check, kind: correctness}\n");
  const auto r = run_process(check(2) + " --profile " + p + " --quote " + quote("8x401g-ib", 8, 2) +
                             " --quote-name sold -q --out-dir " + path("out"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("quote sold"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("401g-ib"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("400g-ndr-ib"), std::string::npos) << r.err;
  const auto other = run_process(check(2) + " --profile " + p + " --quote " + quote("8x400g-ndr-ib", 8, 2) +
                                 " --quote-name vendor-z -q --out-dir " + path("out2"));
  EXPECT_EQ(other.exit_code, 2) << other.out << other.err;
  EXPECT_NE(other.err.find("--quote-name 'vendor-z'"), std::string::npos) << other.err;
}

}  // namespace
}  // namespace fb
