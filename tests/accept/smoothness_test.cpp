// The curve-smoothness rule and the mixed-GPU rule on records built in
// memory: synthetic curves with a protocol bump, a bandwidth fall, latency
// noise below `from`; partitions of one model, of two, and of an allowed mix.
#include "fabricbench/accept/smoothness.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "fabricbench/accept/evaluate.hpp"
#include "record_builder.hpp"

namespace fb::accept {
namespace {

using json = nlohmann::ordered_json;
using test::profile_with_rules;
using test::RecordBuilder;

Verdict judge_curve(const std::string& rule_yaml, const Results& run) { return test::judge_one(rule_yaml, run); }

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// An all_reduce curve on 4 ranks (2 nodes), 64 KiB to 16 MiB: time = 20 us +
// bytes / (10 GB/s), each size's time multiplied by `bump` where it names one.
RecordBuilder curve(std::uint64_t bump_bytes = 0, double bump = 1) {
  RecordBuilder b(4, 2);
  for (std::uint64_t bytes = 64 << 10; bytes <= (16u << 20); bytes *= 2) {
    double us = 20 + static_cast<double>(bytes) / 1e4;
    if (bytes == bump_bytes) us *= bump;
    b.row("all_reduce", "global", bytes, static_cast<double>(bytes) / us / 1e3, us);
  }
  return b;
}

std::vector<CurveBreak> breaks_of(const Results& run, SmoothnessLimits limits) {
  std::vector<const Measurement*> rows;
  for (const auto& m : run.measurements) rows.push_back(&m);
  return find_curve_breaks(rows, limits, run.header);
}

TEST(Smoothness, ASmoothCurveHasNoBreak) {
  const Results run = curve().results();
  EXPECT_TRUE(breaks_of(run, {1.3, 0.05, 0}).empty());
  const Verdict v = judge_curve("  - {kind: smoothness, op: all_reduce, max_jump: 1.3, max_drop: 5%}\n", run);
  EXPECT_EQ(v.status, Status::pass) << v.reason;
  EXPECT_TRUE(mentions(v.reason, "1 curves smooth")) << v.reason;
}

TEST(Smoothness, ATimeAboveBothNeighboursIsAJumpNamingSizeAndRanks) {
  const Results run = curve(1 << 20, 3).results();  // 1 MiB takes 3x: a protocol switch, a flapping link
  const auto found = breaks_of(run, {2.0, 0, 0});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, BreakKind::jump);
  EXPECT_EQ(found[0].row->bytes, 1u << 20);
  EXPECT_NEAR(found[0].factor, 2.9, 0.05);  // 3x over a neighbours' line 3% above the true curve
  EXPECT_EQ(found[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(mentions(found[0].detail, "at 1 MiB")) << found[0].detail;
  EXPECT_TRUE(mentions(found[0].detail, "ranks 0 (node1), 1 (node1), 2 (node2), 3 (node2)")) << found[0].detail;
  // A bump of 1.5x is below a stated factor of 2, above one of 1.3.
  EXPECT_TRUE(breaks_of(curve(1 << 20, 1.5).results(), {2.0, 0, 0}).empty());
  EXPECT_EQ(breaks_of(curve(1 << 20, 1.5).results(), {1.3, 0, 0}).size(), 1u);

  const Verdict v = judge_curve("  - {kind: smoothness, max_jump: 2}\n", run);
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_DOUBLE_EQ(*v.measured, 1);
  EXPECT_EQ(v.unit, "sizes off the curve");
  ASSERT_TRUE(v.row);
  EXPECT_EQ(v.row->bytes, 1u << 20);
  EXPECT_TRUE(mentions(v.reason, "all_reduce/global")) << v.reason;
}

TEST(Smoothness, BusbwFallingAsSizeGrowsIsADrop) {
  // From 4 MiB on the link runs at a fifth of its rate: a bad rail.
  RecordBuilder b(2, 2);
  for (std::uint64_t bytes = 1 << 20; bytes <= (16u << 20); bytes *= 2) {
    const double gbps = bytes >= (4u << 20) ? 2 : 10;
    b.row("all_reduce", "inter", bytes, gbps, static_cast<double>(bytes) / gbps / 1e3);
  }
  const Results run = b.results();
  const auto found = breaks_of(run, {0, 0.1, 0});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, BreakKind::drop);
  EXPECT_EQ(found[0].row->bytes, 4u << 20);
  EXPECT_NEAR(found[0].factor, 0.8, 1e-9);
  EXPECT_TRUE(mentions(found[0].detail, "busbw falls 80% from 10 GB/s at 2 MiB to 2 GB/s at 4 MiB")) << found[0].detail;
  // On log-log axes the first slow size also sits above its neighbours' line (2.2x here).
  const auto jumps = breaks_of(run, {2.0, 0, 0});
  ASSERT_EQ(jumps.size(), 1u);
  EXPECT_EQ(jumps[0].row->bytes, 4u << 20);
  EXPECT_EQ(judge_curve("  - {kind: smoothness, max_drop: 10%}\n", run).status, Status::fail);
  EXPECT_EQ(judge_curve("  - {kind: smoothness, max_drop: 90%}\n", run).status, Status::pass);
}

TEST(Smoothness, SizesBelowFromAreNotJudgedAndCurvesAreKeptApart) {
  RecordBuilder b(4, 2);
  // Latency noise at 8-32 B; an in-place curve of another shape beside the out-of-place one.
  const double noisy[] = {5, 15, 5};
  for (int i = 0; i < 3; ++i) b.row("all_reduce", "global", 8u << i, 0.001, noisy[i]);
  for (std::uint64_t bytes = 1 << 20; bytes <= (4u << 20); bytes *= 2) {
    b.row("all_reduce", "global", bytes, 10, static_cast<double>(bytes) / 1e4, false);
    b.row("all_reduce", "global", bytes, 5, static_cast<double>(bytes) / 5e3, true);
  }
  const Results run = b.results();
  EXPECT_EQ(judge_curve("  - {kind: smoothness, max_jump: 2}\n", run).status, Status::fail);
  const Verdict v = judge_curve("  - {kind: smoothness, max_jump: 2, from: 1K}\n", run);
  EXPECT_EQ(v.status, Status::pass) << v.reason;
  EXPECT_TRUE(mentions(v.reason, "2 curves smooth")) << v.reason;  // out-of-place and in-place, each on its own
}

TEST(Smoothness, TooFewSizesSkipsAndBadLimitsAreRefused) {
  RecordBuilder b(2, 1);
  b.row("all_reduce", "global", 1 << 20, 10, 100);
  b.row("all_reduce", "global", 2 << 20, 10, 200);
  const Verdict v = judge_curve("  - {kind: smoothness, max_jump: 2}\n", b.results());
  EXPECT_EQ(v.status, Status::skip);
  EXPECT_TRUE(mentions(v.reason, "3 sizes or more")) << v.reason;
  EXPECT_EQ(judge_curve("  - {kind: smoothness, max_drop: 10%}\n", b.results()).status, Status::pass);
  for (const char* bad : {"  - {kind: smoothness}\n", "  - {kind: smoothness, max_jump: 0.5}\n",
                          "  - {kind: smoothness, max_drop: 10}\n", "  - {kind: smoothness, max_drop: 150%}\n"})
    EXPECT_THROW(profile_with_rules(bad), std::exception) << bad;
}

void node_with(RecordBuilder& b, int rank, const std::string& host, const std::string& model) {
  b.inventory(rank, host, json::array({{{"model", model}}}), json::array(), json::array());
}

TEST(MixedGpus, OneModelPassesTwoFailNamingWhereEachIs) {
  RecordBuilder same(2, 2);
  node_with(same, 0, "node1", "NVIDIA A100-SXM4-80GB");
  node_with(same, 1, "node2", "NVIDIA A100-SXM4-80GB");
  const Verdict ok = judge_curve("  - {kind: mixed_gpus}\n", same.results());
  EXPECT_EQ(ok.status, Status::pass) << ok.reason;

  RecordBuilder mixed(3, 3);
  node_with(mixed, 0, "node1", "NVIDIA A100-SXM4-80GB");
  node_with(mixed, 1, "node2", "NVIDIA A100-SXM4-80GB");
  node_with(mixed, 2, "node3", "NVIDIA GeForce RTX 4090");
  const Verdict v = judge_curve("  - {kind: mixed_gpus}\n", mixed.results());
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_DOUBLE_EQ(*v.measured, 2);
  EXPECT_TRUE(mentions(v.reason, "NVIDIA A100-SXM4-80GB on node1, node2; NVIDIA GeForce RTX 4090 on node3")) << v.reason;
  EXPECT_TRUE(mentions(v.reason, "allow:")) << v.reason;

  // The profile allows this mix (parts of the names, any case), but not a third model.
  EXPECT_EQ(judge_curve("  - {kind: mixed_gpus, allow: [a100, RTX 4090]}\n", mixed.results()).status, Status::pass);
  const Verdict other = judge_curve("  - {kind: mixed_gpus, allow: [A100, H800]}\n", mixed.results());
  EXPECT_EQ(other.status, Status::fail);
  EXPECT_TRUE(mentions(other.reason, "not in allow (A100, H800): NVIDIA GeForce RTX 4090")) << other.reason;
}

TEST(MixedGpus, NoModelKnownSkipsAndAnAllowOfOneIsRefused) {
  RecordBuilder none(2, 2);
  none.inventory(0, "node1", json::array(), json::array(), json::array());
  none.inventory(1, "node2", json::array(), json::array(), json::array());
  const Verdict v = judge_curve("  - {kind: mixed_gpus}\n", none.results());
  EXPECT_EQ(v.status, Status::skip);
  EXPECT_TRUE(mentions(v.reason, "no inventory line names a GPU model")) << v.reason;
  EXPECT_EQ(judge_curve("  - {kind: mixed_gpus}\n", RecordBuilder(2, 2).results()).status, Status::skip);
  EXPECT_THROW(profile_with_rules("  - {kind: mixed_gpus, allow: [A100]}\n"), std::exception);
}

}  // namespace
}  // namespace fb::accept

namespace fb::accept {
namespace {

// run's cliff warning on the GPU records this project measured on an H200 and
// on nccl-tests' own output imported by the binary (results/): healthy NCCL
// curves, none with a cliff. The counts make an empty read fail.
TEST(Cliffs, TheRecordedH200CurvesHaveNone) {
  for (const char* name : {"h200-nccl-tests-imported/nccl-tests.jsonl", "h200-device-check-2026-12-04/nccl.jsonl",
                           "h200-device-check-2026-11-30/nccl.jsonl"}) {
    const Results run = read_results(std::string(FB_SOURCE_DIR) + "/results/" + name);
    std::vector<const Measurement*> rows;
    for (const auto& m : run.measurements) rows.push_back(&m);
    EXPECT_GE(curves_with_sizes(rows, 8), 1u) << name;
    const auto cliffs = find_cliffs(rows, run.header);
    EXPECT_TRUE(cliffs.empty()) << name << ": " << (cliffs.empty() ? "" : cliffs[0].curve + " " + cliffs[0].where);
  }
}

}  // namespace
}  // namespace fb::accept
