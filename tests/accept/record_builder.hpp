// Results records built in memory for rule tests: a header for R ranks on
// N nodes, measurement rows with chosen figures, and any other line.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabricbench/accept/evaluate.hpp"
#include "fabricbench/accept/profile.hpp"
#include "fabricbench/core/record.hpp"

namespace fb::test {

class RecordBuilder {
 public:
  RecordBuilder(int ranks, int nodes);

  // A row whose time statistics all equal time_us (no spread: set
  // time.stddev_us on the returned row for stability rules), busbw and
  // algbw as given.
  Measurement& row(const std::string& op, const std::string& scope, std::uint64_t bytes, double busbw_gbps,
                   double time_us = 100, bool in_place = false);
  void line(nlohmann::ordered_json j) { lines_.push_back(std::move(j)); }
  // An inventory line in the shape topo writes (docs/results-schema.md, `inventory`).
  void inventory(int rank, const std::string& host, nlohmann::ordered_json gpus, nlohmann::ordered_json nics,
                 nlohmann::ordered_json paths);
  void pair(int a, int b, double unidir_gbps, double bidir_gbps, double latency_us);
  void skip(const std::string& op, const std::string& scope, const std::string& reason);

  // The record as read_results would return it: the lines, then the rows,
  // through parse_results (a line of a shape the reader refuses throws).
  Results results() const;

 private:
  std::vector<nlohmann::ordered_json> lines_;  // the header first, then lines in the order given
  std::vector<Measurement> rows_;
  int ranks_;
};

// A profile around `rules_yaml` (the text under "rules:", indented two
// spaces) whose sweep runs every op at every scope, so any row rule parses.
accept::Profile profile_with_rules(const std::string& rules_yaml);
// The first rule of such a profile judged on `run`, with allow_skipped, so a
// rule the record cannot answer shows the SKIP and its evaluator's reason.
accept::Verdict judge_one(const std::string& rule_yaml, const Results& run, const Results* baseline = nullptr,
                          bool strict = false);
std::string profile_text_with_rules(const std::string& rules_yaml);

}  // namespace fb::test
