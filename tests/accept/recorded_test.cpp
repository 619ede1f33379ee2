// Evaluation on results files read from disk: a recorded local run, and a
// hand-written record in the shapes of topo's inventory and pairs' pair lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "fabricbench/accept/evaluate.hpp"
#include "fabricbench/accept/profile.hpp"

namespace fb::accept {
namespace {

std::string fixture(const std::string& name) { return std::string(FB_SOURCE_DIR) + "/tests/accept/fixtures/" + name; }

const Verdict& find(const std::vector<Verdict>& verdicts, const std::string& rule) {
  for (const auto& v : verdicts)
    if (v.rule == rule) return v;
  throw std::runtime_error("no verdict for " + rule);
}

TEST(Recorded, LocalSmokeOnFourRanksPassesAsItDidWhenRecorded) {
  const Results run = read_results(fixture("local-smoke-np4.jsonl"));
  const Profile p = load_profile(std::string(FB_SOURCE_DIR) + "/profiles/local-smoke.yaml");
  const auto verdicts = evaluate(p.rules, run, nullptr, {});
  ASSERT_EQ(verdicts.size(), p.rules.size());
  EXPECT_EQ(exit_code(verdicts), 0);
  // The record holds the check lines of the live run: the same rules, the same statuses.
  std::map<std::string, std::string> recorded;
  for (const auto& line : run.checks) recorded[line.rule] = line.status;
  ASSERT_EQ(recorded.size(), verdicts.size());
  for (const auto& v : verdicts) {
    std::string status(name(v.status));
    std::transform(status.begin(), status.end(), status.begin(), ::tolower);
    EXPECT_EQ(recorded[v.rule], status) << v.rule;
  }
  const Verdict& latency = find(verdicts, "pingpong 8 B latency");
  EXPECT_EQ(latency.status, Status::pass);
  EXPECT_GT(*latency.measured, 0);
  EXPECT_EQ(find(verdicts, "every element right").status, Status::pass);
  // Four ranks of one machine: the inventory lines agree; shared memory has no spec peak.
  EXPECT_EQ(find(verdicts, "same hardware on every node").status, Status::pass);
  EXPECT_EQ(find(verdicts, "all_reduce 1 MiB near the path's peak").status, Status::skip);
  EXPECT_EQ(run.inventory.size(), 4u);
  // A strict reading turns that skip into an error.
  EXPECT_EQ(exit_code(evaluate(p.rules, run, nullptr, {true})), 2);
}

Profile degraded_port_profile() {
  return parse_profile(R"(
name: four-nodes
backend: nccl
sweeps:
  - {ops: [all_reduce, sendrecv], scopes: [inter, rail], check: true}
pairs: {size: 1G}
rules:
  - {name: inter 0.8 of spec, kind: spec, op: all_reduce, scope: inter, size: 1G, min: 0.80 of spec}
  - {name: inter 0.9 of spec, kind: spec, op: all_reduce, scope: inter, size: 1G, min: 0.90 of spec}
  - {name: rail spec, kind: spec, op: all_reduce, scope: rail, size: 1G, min: 0.80 of spec, optional: true}
  - {name: same hardware, kind: uniformity, across: inventory}
  - {name: no weak link, kind: pairs, metric: unidir, min: 0.9 of median}
  - {name: small latency, kind: latency, op: sendrecv, scope: inter, size: 8, max: 20 us}
  - {name: ranks alike, kind: uniformity, across: ranks, op: all_reduce, scope: inter, size: 1G, max: 1.2 of median}
  - {name: correct, kind: correctness}
)");
}

TEST(Recorded, ADegradedPortShowsInSpecInventoryAndPairs) {
  const Results run = read_results(fixture("four-nodes-degraded-port.jsonl"));
  ASSERT_TRUE(run.complete);
  const auto verdicts = evaluate(degraded_port_profile().rules, run, nullptr, {});
  const Verdict& spec80 = find(verdicts, "inter 0.8 of spec");
  EXPECT_EQ(spec80.status, Status::pass) << spec80.reason;
  EXPECT_DOUBLE_EQ(*spec80.expected, 20.0);  // 0.8 x 25 GB/s: the HDR port bounds the scope
  EXPECT_DOUBLE_EQ(*spec80.measured, 21.1);  // the in-place row is the worse of two
  EXPECT_EQ(find(verdicts, "inter 0.9 of spec").status, Status::fail);
  const Verdict& rail = find(verdicts, "rail spec");
  EXPECT_EQ(rail.status, Status::skip);  // no rail rows in this record, and the rule is optional
  EXPECT_TRUE(rail.optional);
  const Verdict& same = find(verdicts, "same hardware");
  EXPECT_EQ(same.status, Status::fail);
  EXPECT_NE(same.reason.find("nic_rates differs"), std::string::npos) << same.reason;
  EXPECT_NE(same.reason.find("'1 x 200 Gb/s IB + 1 x 400 Gb/s IB' on gpu-a04"), std::string::npos) << same.reason;
  EXPECT_EQ(same.reason.find("gpus differs"), std::string::npos) << same.reason;
  const Verdict& pairs = find(verdicts, "no weak link");
  EXPECT_EQ(pairs.status, Status::fail);
  EXPECT_NE(pairs.reason.find("3 links beyond the bound"), std::string::npos) << pairs.reason;
  EXPECT_NE(pairs.reason.find("gpu-a04"), std::string::npos) << pairs.reason;
  EXPECT_EQ(find(verdicts, "small latency").status, Status::pass);
  EXPECT_EQ(find(verdicts, "ranks alike").status, Status::pass);
  EXPECT_EQ(find(verdicts, "correct").status, Status::pass);
  EXPECT_EQ(exit_code(verdicts), 1);
}

}  // namespace
}  // namespace fb::accept
