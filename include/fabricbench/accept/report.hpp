// What `fabricbench check` hands to people and CI: the verdict table, a JSON
// document and JUnit XML (one testcase per rule and per node).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "fabricbench/accept/evaluate.hpp"

namespace fb::accept {

struct Report {
  std::string profile;        // profile name
  std::string profile_path;   // file it came from
  std::string results_path;   // the results record the rules were evaluated on
  std::string baseline_path;  // "" when none
  std::string hostname;       // where the verdict was computed
  std::string timestamp;      // UTC, ISO 8601
  double elapsed_s = 0;       // the run, or 0 when only evaluated
  int ranks = 0;
  std::vector<std::string> hosts;  // the job's nodes, in node order: one JUnit testcase each
  bool strict = false;
  std::string run_error;  // set on the placeholder written before a run: why no verdict exists
  int run_exit_code = 3;  // with run_error: 3, the run did not finish; 2, it was refused before measuring
  std::vector<Verdict> verdicts;
};

// The table rank 0 prints: rule, measured, expected, margin, status, reason.
std::string format_table(const std::vector<Verdict>& verdicts);
// One line: "check local-smoke: 5 passed, 1 failed, 2 skipped".
std::string format_summary(const Report& report);

// The record's `check` line of a verdict (record_lines.hpp).
CheckLine check_line(const Verdict& verdict);
nlohmann::ordered_json to_json(const Verdict& verdict);
// The check.json document: the report's fields, counts, exit code, verdicts.
nlohmann::ordered_json to_json(const Report& report);
// The same as the file's text: indented, invalid UTF-8 (a hostname, a path) replaced, newline-ended.
std::string check_json_text(const Report& report);

// JUnit XML: one <testsuite> per profile, one <testcase> per rule; FAIL is a
// <failure> carrying the figures, SKIP <skipped>, an unjudged rule <error>.
// Then one <testcase> per node (classname ...<profile>.node, named by host):
// a <failure> listing the failed rules that blame it, else a pass; an
// <error> each when the run did not finish.
std::string to_junit_xml(const Report& report);

// Escapes text for XML attributes and character data; drops characters XML
// 1.0 cannot carry (control characters other than tab, newline, return).
std::string xml_escape(std::string_view text);

}  // namespace fb::accept
