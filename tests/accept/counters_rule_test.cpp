// The `counters` rule on records built here: a node's port whose counter
// moved fails and is blamed with its device, an unchanged run passes, a
// saturated counter cannot be judged, an informational rule reports and
// never fails, and retransmissions are judged per GB the rows carried.
#include <gtest/gtest.h>

#include "fabricbench/accept/report.hpp"
#include "fabricbench/core/errors.hpp"
#include "record_builder.hpp"

namespace fb::accept {
namespace {

using test::judge_one;

const char* const kSymbolErrors = "  - {kind: counters, counter: symbol_error, max: 0}\n";

nlohmann::ordered_json counter_line(int node, const std::string& host, const std::string& device,
                                    const std::string& counter, std::optional<std::uint64_t> delta,
                                    const std::string& why = "") {
  CounterLine l;
  l.node = node;
  l.host = host;
  l.device = device;
  l.device_kind = device == "node" ? "node" : "port";
  l.counter = counter;
  l.delta = delta;
  l.unknown_reason = why;
  return to_json(l);
}

test::RecordBuilder two_nodes() {
  test::RecordBuilder b(2, 2);
  b.row("all_reduce", "inter", 1 << 20, 10);
  return b;
}

TEST(CountersRule, PassesWhenNoCounterMoved) {
  const Verdict v = judge_one(kSymbolErrors, two_nodes().results());
  EXPECT_EQ(v.status, Status::pass) << v.reason;
  EXPECT_TRUE(v.offenders.empty());
}

TEST(CountersRule, FailsBlamingTheNodeAndPortWhereItMoved) {
  auto b = two_nodes();
  b.line(counter_line(1, "node2", "mlx5_0:1", "symbol_error", 2));
  b.line(counter_line(1, "node2", "mlx5_0:1", "symbol_error", 1));
  b.line(counter_line(0, "node1", "mlx5_0:1", "port_rcv_errors", 5));  // another counter: not this rule's
  const Verdict v = judge_one(kSymbolErrors, b.results());
  EXPECT_EQ(v.status, Status::fail) << v.reason;
  EXPECT_EQ(v.measured, 3);
  ASSERT_EQ(v.offenders.size(), 1u);
  EXPECT_EQ(v.offenders[0].host, "node2");
  EXPECT_EQ(v.offenders[0].device, "mlx5_0:1");
  EXPECT_EQ(v.offenders[0].figure, 3);
  EXPECT_NE(v.reason.find("node 1 (node2) mlx5_0:1"), std::string::npos) << v.reason;
  // check.json's bad list names the device.
  Report r;
  r.verdicts = {v};
  const auto bad = to_json(r)["bad"];
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0]["host"], "node2");
  EXPECT_EQ(bad[0]["device"], "mlx5_0:1");
  // A bound above the count passes.
  EXPECT_EQ(judge_one("  - {kind: counters, counter: symbol_error, max: 3}\n", b.results()).status, Status::pass);
}

TEST(CountersRule, ASaturatedCounterCannotBeJudged) {
  auto b = two_nodes();
  b.line(counter_line(0, "node1", "mlx5_0:1", "symbol_error", std::nullopt, "saturated: the 16-bit counter stops"));
  const Verdict v = judge_one(kSymbolErrors, b.results());
  EXPECT_EQ(v.status, Status::skip) << v.reason;
  EXPECT_NE(v.reason.find("saturated"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("node1"), std::string::npos) << v.reason;
}

TEST(CountersRule, InformationalReportsAndNeverFails) {
  auto b = two_nodes();
  b.line(counter_line(1, "node2", "mlx5_0:1", "symbol_error", 4));
  const Verdict v =
      judge_one("  - {kind: counters, counter: symbol_error, max: 0, informational: true}\n", b.results());
  EXPECT_EQ(v.status, Status::pass) << v.reason;
  EXPECT_EQ(v.measured, 4);
  EXPECT_TRUE(v.offenders.empty());
  EXPECT_NE(v.reason.find("informational"), std::string::npos) << v.reason;
}

TEST(CountersRule, RetransmitsAreJudgedPerGbTheRowsCarried) {
  auto b = two_nodes();
  b.line(counter_line(1, "node2", "node", "tcp_retrans_segs", 50));
  const Results run = b.results();
  const Measurement& m = run.measurements.at(0);
  const double gb = static_cast<double>(m.bytes) * (m.busbw_gbps / m.algbw_gbps) * m.time.iterations / 1e9;
  const double per_gb = 50 / gb;
  const auto rule = [](double max) {
    return "  - {kind: counters, counter: tcp_retransmits_per_gb, max: " + std::to_string(max) + "}\n";
  };
  const Verdict over = judge_one(rule(per_gb * 0.9), run);
  EXPECT_EQ(over.status, Status::fail) << over.reason;
  ASSERT_TRUE(over.measured);
  EXPECT_NEAR(*over.measured, per_gb, per_gb * 1e-9);
  ASSERT_EQ(over.offenders.size(), 1u);
  EXPECT_EQ(over.offenders[0].device, "node");
  EXPECT_EQ(judge_one(rule(per_gb * 1.1), run).status, Status::pass);
}

TEST(CountersRule, ARecordBeforeSchemaOneTenCannotBeJudged) {
  Results old = two_nodes().results();
  old.header.schema_version = "1.9";
  const Verdict v = judge_one(kSymbolErrors, old);
  EXPECT_EQ(v.status, Status::skip);
  EXPECT_NE(v.reason.find("1.11"), std::string::npos) << v.reason;
}

TEST(CountersRule, AnUnknownCounterIsRefusedWithTheAllowedNames) {
  try {
    (void)test::profile_with_rules("  - {kind: counters, counter: symbol_errors, max: 0}\n");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'symbol_errors' is unknown"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tcp_retransmits_per_gb"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)test::profile_with_rules("  - {kind: counters, counter: symbol_error, max: -1}\n"), UsageError);
  EXPECT_THROW((void)test::profile_with_rules("  - {kind: counters, max: 0}\n"), UsageError);
}

}  // namespace
}  // namespace fb::accept
