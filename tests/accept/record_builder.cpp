#include "record_builder.hpp"

#include <fmt/format.h>

#include <sstream>

#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/types.hpp"
#include "rows.hpp"

namespace fb::test {

RecordBuilder::RecordBuilder(int ranks, int nodes) : ranks_(ranks) {
  nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
  nlohmann::ordered_json rank_node = nlohmann::ordered_json::array();
  for (int n = 0; n < nodes; ++n) hosts.push_back(fmt::format("node{}", n + 1));
  for (int r = 0; r < ranks; ++r) rank_node.push_back(r * nodes / ranks);
  lines_.push_back({{"type", "run"},
                    {"schema_version", schema_version()},
                    {"command", "check"},
                    {"ranks", ranks},
                    {"nodes", nodes},
                    {"hosts", hosts},
                    {"rank_node", rank_node}});
}

Measurement& RecordBuilder::row(const std::string& op, const std::string& scope, std::uint64_t bytes, double busbw_gbps,
                                double time_us, bool in_place) {
  Measurement m = measurement_row(op, scope, ranks_, bytes, time_us);
  m.in_place = in_place;
  // No path label: a spec rule then allows every class of path (a test sets one to narrow it).
  m.path.clear();
  // A record holds busbw = algbw x the op's factor (the reader checks it).
  const auto known = parse_op(op);
  const double factor = known ? busbw_factor(*known, ranks_) : 1.0;
  m.busbw_gbps = busbw_gbps;
  m.algbw_gbps = factor > 0 ? busbw_gbps / factor : busbw_gbps;
  rows_.push_back(m);
  return rows_.back();
}

void RecordBuilder::inventory(int rank, const std::string& host, nlohmann::ordered_json gpus,
                              nlohmann::ordered_json nics, nlohmann::ordered_json paths) {
  line({{"type", "inventory"},
        {"rank", rank},
        {"host", host},
        {"node", 0},
        {"local_rank", 0},
        {"gpus", std::move(gpus)},
        {"nics", std::move(nics)},
        {"paths", std::move(paths)}});
}

void RecordBuilder::pair(int a, int b, double unidir_gbps, double bidir_gbps, double latency_us) {
  line({{"type", "pair"},
        {"rail", 0},
        {"retest", false},
        {"node_a", a},
        {"node_b", b},
        {"host_a", fmt::format("node{}", a + 1)},
        {"host_b", fmt::format("node{}", b + 1)},
        {"unidir_ab_gbps", unidir_gbps},
        {"unidir_ba_gbps", unidir_gbps},
        {"bidir_gbps", bidir_gbps},
        {"latency_us", latency_us}});
}

void RecordBuilder::skip(const std::string& op, const std::string& scope, const std::string& reason) {
  line({{"type", "skip"}, {"op", op}, {"scope", scope}, {"bytes", 0}, {"in_place", false}, {"reason", reason}});
}

Results RecordBuilder::results() const {
  // Through the reader, as a file on disk would go: its typed lines and all.
  std::string text;
  for (const auto& l : lines_) text += l.dump() + "\n";
  for (const auto& m : rows_) text += to_json(m).dump() + "\n";
  std::istringstream in(text);
  return parse_results(in, "built-in-memory.jsonl");
}

accept::Profile profile_with_rules(const std::string& rules_yaml) {
  return accept::parse_profile(profile_text_with_rules(rules_yaml));
}

accept::Verdict judge_one(const std::string& rule_yaml, const Results& run, const Results* baseline, bool strict) {
  const accept::Profile p = profile_with_rules(rule_yaml);
  return accept::evaluate_rule(p.rules.at(0), run, baseline, {strict, true});
}

std::string profile_text_with_rules(const std::string& rules_yaml) {
  return "name: test\nbackend: mpi\nsweeps:\n  - ops: [all_reduce, all_gather, sendrecv]\n"
         "    scopes: all\n    check: true\n"
         "p2p:\n  - ops: [pingpong, unidir]\n    scopes: all\n"
         "pairs:\n  size: 1G\n"
         "rules:\n" +
         rules_yaml;
}

}  // namespace fb::test
