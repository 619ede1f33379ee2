// JUnit XML and check.json: well-formed whatever the rule names hold, counts
// that agree with the testcases, failures that carry the figures.
#include "fabricbench/accept/report.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "junit_check.hpp"
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

TEST_F(JunitFile, ARunThatDidNotFinishIsOneError) {
  Report r = sample();
  r.run_error = "the run did not finish";
  const auto j = parse(r);
  ASSERT_FALSE(j.contains("problem")) << j.dump();
  EXPECT_EQ(j["testsuite"]["tests"], "1");
  EXPECT_EQ(j["testsuite"]["errors"], "1");
  EXPECT_EQ(j["names"][0], "run");
  EXPECT_EQ(to_json(r)["status"], "incomplete");
  EXPECT_EQ(to_json(r)["exit_code"], 3);
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

}  // namespace
}  // namespace fb::accept
