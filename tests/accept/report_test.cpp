// JUnit XML and check.json: well-formed whatever the rule names hold, counts
// that agree with the testcases, failures that carry the figures.
#include "fabricbench/accept/report.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fabricbench/accept/profile.hpp"
#include "junit_check.hpp"
#include "record_builder.hpp"
#include "process.hpp"

namespace fb::accept {
namespace {

Verdict verdict(const std::string& rule, Status s) {
  Verdict v;
  v.rule = rule;
  v.status = s;
  v.kind = RuleKind::absolute;
  if (s == Status::pass || s == Status::fail) {
    v.measured = s == Status::pass ? 44 : 30;
    v.expected = 40;
    v.unit = "GB/s";
    v.expected_text = ">= 40 GB/s";
    v.margin = s == Status::pass ? 0.1 : -0.25;
    v.row = CheckRow{"all_reduce", "inter", 1073741824, false, "float", "tcp", 4, std::nullopt};
  }
  if (s == Status::skip) {
    v.judged = false;
    v.optional = true;
  }
  v.reason = s == Status::skip ? "no inventory lines in this run" : "all_reduce/inter 1 GiB <worst> & \"slow\"";
  return v;
}

Report sample() {
  Report r;
  r.profile = "h100-8x-ndr400";
  r.profile_path = "profiles/h100-8x-ndr400.yaml";
  r.results_path = "out/results.jsonl";
  r.hostname = "node1";
  r.timestamp = "2026-11-29T10:00:00Z";
  r.elapsed_s = 12.5;
  r.ranks = 16;
  r.verdicts = {verdict("busbw <intra> & 'friends'", Status::pass), verdict("inter \"busbw\"", Status::fail),
                verdict("spec", Status::skip), verdict("strict one", Status::error),
                verdict("bad bytes \xff\xfe and a bell \x07", Status::fail)};
  return r;
}

class JunitFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("fb_junit_"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  nlohmann::json parse(const Report& r) {
    const std::string path = dir_ + "/junit.xml";
    std::ofstream(path) << to_junit_xml(r);
    return test::junit_counts(path);
  }
  std::string dir_;
};

TEST_F(JunitFile, IsWellFormedAndCountsAgree) {
  const auto j = parse(sample());
  ASSERT_FALSE(j.contains("problem")) << j.dump();
  EXPECT_EQ(j["root"], "testsuites");
  for (const char* level : {"testsuites", "testsuite"}) {
    EXPECT_EQ(j[level]["tests"], "5") << level;
    EXPECT_EQ(j[level]["failures"], "2") << level;
    EXPECT_EQ(j[level]["errors"], "1") << level;
    EXPECT_EQ(j[level]["skipped"], "1") << level;
  }
  EXPECT_EQ(j["cases"], 5);
  EXPECT_EQ(j["failure_cases"], 2);
  EXPECT_EQ(j["error_cases"], 1);
  EXPECT_EQ(j["skipped_cases"], 1);
  // Names come back as written; bytes XML cannot carry become U+FFFD.
  EXPECT_EQ(j["names"][0], "busbw <intra> & 'friends'");
  EXPECT_EQ(j["names"][1], "inter \"busbw\"");
  EXPECT_EQ(j["names"][4], "bad bytes \xEF\xBF\xBD\xEF\xBF\xBD and a bell \xEF\xBF\xBD");
  const std::string failure = j["failure_text"][0];
  EXPECT_NE(failure.find("measured: 30.0 GB/s"), std::string::npos) << failure;
  EXPECT_NE(failure.find("expected: >= 40 GB/s"), std::string::npos) << failure;
  EXPECT_NE(failure.find("margin: -25.0%"), std::string::npos) << failure;
}

TEST_F(JunitFile, ARunThatDidNotFinishKeepsEveryRuleAsAnError) {
  Report r = sample();
  r.run_error = "the run did not finish";
  const auto j = parse(r);
  ASSERT_FALSE(j.contains("problem")) << j.dump();
  // The run's own testcase, then the five rules: none passes or fails.
  EXPECT_EQ(j["testsuite"]["tests"], "6");
  EXPECT_EQ(j["testsuite"]["errors"], "6");
  EXPECT_EQ(j["testsuite"]["failures"], "0");
  EXPECT_EQ(j["names"][0], "run");
  EXPECT_EQ(j["names"][2], "inter \"busbw\"");
  EXPECT_EQ(to_json(r)["status"], "incomplete");
  EXPECT_EQ(to_json(r)["exit_code"], 3);
}

// A record of four nodes whose node3 has slow links, judged by a rule that
// blames nodes and one that passes: the suite has a testcase per rule and
// per node, and only node3's node testcase fails.
Report four_nodes_one_slow() {
  test::RecordBuilder b(4, 4);
  b.pair(0, 1, 11.8, 23.0, 20);
  b.pair(2, 3, 2.9, 5.8, 60);
  b.pair(0, 2, 2.9, 5.9, 61);
  b.pair(1, 3, 11.9, 23.2, 21);
  b.pair(0, 3, 11.7, 22.9, 20);
  b.pair(1, 2, 2.9, 5.7, 62);
  const Results run = b.results();
  const Profile p = test::profile_with_rules(
      "  - {name: slow nodes, kind: pairs, across: nodes, min: 0.5 of median}\n"
      "  - {name: latency, kind: pairs, metric: latency, across: nodes, max: 5 of median}\n");
  Report r;
  r.profile = "host-tcp";
  r.hosts = run.header.hosts;
  r.verdicts = evaluate(p.rules, run, nullptr, {});
  return r;
}

TEST_F(JunitFile, OneTestcasePerRuleAndPerNodeAndOnlyTheBadNodeFails) {
  const Report r = four_nodes_one_slow();
  const auto j = parse(r);
  ASSERT_FALSE(j.contains("problem")) << j.dump();
  EXPECT_EQ(j["testsuite"]["tests"], "6");  // 2 rules, 4 nodes
  EXPECT_EQ(j["testsuites"]["tests"], "6");
  EXPECT_EQ(j["testsuite"]["failures"], "2");  // the rule and node3
  EXPECT_EQ(j["failure_cases"], 2);
  EXPECT_EQ(j["names"], nlohmann::json({"slow nodes", "latency", "node1", "node2", "node3", "node4"}));
  const std::string node3 = j["failure_text"][1];
  EXPECT_NE(node3.find("rule 'slow nodes' (pairs): 2.900 GB/s"), std::string::npos) << node3;
  const std::string xml = to_junit_xml(r);
  EXPECT_NE(xml.find("<testcase name=\"node3\" classname=\"fabricbench.check.host-tcp.node\""), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("message=\"FAIL: blamed by &apos;slow nodes&apos;\""), std::string::npos) << xml;
  // check.json names the same node as data.
  const auto bad = to_json(r)["bad"];
  ASSERT_EQ(bad.size(), 1u) << bad.dump();
  EXPECT_EQ(bad[0]["host"], "node3");
}

TEST_F(JunitFile, ARunThatDidNotFinishKeepsEveryNodeAsAnError) {
  Report r = four_nodes_one_slow();
  r.run_error = "the run did not finish";
  const auto j = parse(r);
  ASSERT_FALSE(j.contains("problem")) << j.dump();
  // The run's testcase, the two rules and the four nodes: all unjudged.
  EXPECT_EQ(j["testsuite"]["tests"], "7");
  EXPECT_EQ(j["testsuite"]["errors"], "7");
  EXPECT_EQ(j["testsuite"]["failures"], "0");
  EXPECT_EQ(j["names"][6], "node4");
}

// A hand-made record without hosts in its header: the hosts a failed rule
// blames still get their testcase.
TEST_F(JunitFile, ABlamedHostTheHeaderDoesNotListGetsATestcase) {
  Report r = sample();
  r.verdicts[1].offenders = {{"node7", 12, "", 260, "us"}};
  const auto j = parse(r);
  ASSERT_FALSE(j.contains("problem")) << j.dump();
  EXPECT_EQ(j["testsuite"]["tests"], "6");
  EXPECT_EQ(j["names"][5], "node7");
  EXPECT_EQ(j["failure_cases"], 3);
  EXPECT_NE(j["failure_text"][2].get<std::string>().find("rank 12"), std::string::npos) << j.dump();
}

TEST_F(JunitFile, NoRulesIsStillAValidSuite) {
  Report r = sample();
  r.verdicts.clear();
  const auto j = parse(r);
  ASSERT_FALSE(j.contains("problem")) << j.dump();
  EXPECT_EQ(j["testsuite"]["tests"], "0");
}

TEST(XmlEscape, EscapesMarkupAndDropsWhatXmlCannotCarry) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("line\nnext"), "line&#10;next");
  EXPECT_EQ(xml_escape("\x01"), "\xEF\xBF\xBD");
  EXPECT_EQ(xml_escape("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(xml_escape("\xC2\xB5s"), "\xC2\xB5s");                // µs stays
  EXPECT_EQ(xml_escape("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // cut short
}

TEST(ReportJson, CountsStatusAndVerdicts) {
  const auto j = to_json(sample());
  EXPECT_EQ(j["status"], "error");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["counts"]["pass"], 1);
  EXPECT_EQ(j["counts"]["fail"], 2);
  EXPECT_EQ(j["counts"]["skip"], 1);
  EXPECT_EQ(j["counts"]["error"], 1);
  ASSERT_EQ(j["verdicts"].size(), 5u);
  EXPECT_EQ(j["verdicts"][1]["status"], "fail");
  EXPECT_EQ(j["verdicts"][1]["measured"], 30);
  EXPECT_EQ(j["verdicts"][2]["measured"], nullptr);
  EXPECT_EQ(j["baseline"], nullptr);
  EXPECT_TRUE(j["bad"].empty()) << j["bad"].dump();  // no rule blamed a node
}

TEST(ReportJson, BadNodesAreDataFromFailedRulesOnly) {
  Report r = sample();
  r.verdicts[1].offenders = {{"node7", 12, "", 260, "us"}};
  r.verdicts[0].offenders = {{"node9", 3, "", 100, "us"}};  // a passed rule blames nobody
  r.verdicts[4].offenders = {{"node2", -1, "node4", 2.9, "GB/s"}};
  const auto bad = to_json(r)["bad"];
  ASSERT_EQ(bad.size(), 2u) << bad.dump();
  EXPECT_EQ(bad[0]["host"], "node7");
  EXPECT_EQ(bad[0]["rank"], 12);
  EXPECT_EQ(bad[0]["rule"], "inter \"busbw\"");
  EXPECT_EQ(bad[0]["figure"], 260);
  EXPECT_EQ(bad[0]["peer"], nullptr);
  EXPECT_EQ(bad[1]["rank"], nullptr);
  EXPECT_EQ(bad[1]["peer"], "node4");
  EXPECT_EQ(bad[1]["unit"], "GB/s");
}

TEST(VerdictTable, OneLinePerRuleWithTheFigures) {
  const std::string t = format_table(sample().verdicts);
  EXPECT_NE(t.find("30.0 GB/s"), std::string::npos) << t;
  EXPECT_NE(t.find("-25.0%"), std::string::npos) << t;
  EXPECT_NE(t.find("SKIP    no inventory lines in this run"), std::string::npos) << t;
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 6);  // header + 5 rules
  EXPECT_EQ(format_summary(sample()),
            "check h100-8x-ndr400: 1 passed, 2 failed, 1 skipped, 1 in error of 5 rules; 1 not judged (see each "
            "reason above): 'spec' skipped (optional)");
  Report incomplete = sample();
  incomplete.run_error = "the record did not finish";
  EXPECT_EQ(format_summary(incomplete).rfind("check h100-8x-ndr400: INCOMPLETE, 1 passed", 0), 0u)
      << format_summary(incomplete);
}

// The layout people read and scripts grep: "# " head, rows under it, rule
// and expectation clipped at 44 and 52 characters, no spaces at a line's end.
TEST(VerdictTable, LongNamesAreClippedAndColumnsStayAligned) {
  Verdict clipped = verdict(std::string(50, 'r'), Status::fail);
  clipped.expected_text = std::string(60, 'x');
  clipped.reason = "";
  const std::vector<Verdict> verdicts{clipped, verdict("spec", Status::skip)};
  EXPECT_EQ(format_table(verdicts),
            "# rule                                                  measured  expected                              "
            "                  margin  verdict detail\n"
            "  rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr...         30.0 GB/s  xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxx...    -25.0%  FAIL\n"
            "  spec                                                         -  -                                     "
            "                       -  SKIP    no inventory lines in this run\n");
}

}  // namespace
}  // namespace fb::accept
