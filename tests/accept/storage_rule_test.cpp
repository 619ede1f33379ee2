// storage rules on records built in memory: the figure at the asked node
// count decides, the worst matching row wins, page-cache rows never judge,
// and a record without the asked rows says what it measured instead.
#include <gtest/gtest.h>

#include "fabricbench/accept/evaluate.hpp"
#include "fabricbench/core/errors.hpp"
#include "record_builder.hpp"

namespace fb::accept {
namespace {

using test::RecordBuilder;

// A storage line of `nodes` nodes (hosts n0, n1 ...) whose nodes read at
// `node_gbps` each; the aggregate is their sum.
StorageLine storage_line(int nodes, double node_gbps, const std::string& mode = "direct",
                         const std::string& pattern = "seq_read", const std::string& cache = "bypassed") {
  StorageLine l;
  l.run_id = "r";
  l.target = "path";
  l.path = "/shared/ds";
  l.fs_type = "fuse.sshfs";
  l.fs_kind = "network";
  l.pattern = pattern;
  l.mode = mode;
  l.o_direct = mode == "direct";
  l.cache = cache;
  l.block_bytes = 16ull << 20;
  l.file_bytes = 1ull << 30;
  l.files = 1;
  l.nodes = l.ranks = nodes;
  for (int i = 0; i < nodes; ++i) {
    l.hosts.push_back("n" + std::to_string(i));
    l.node_gbps.push_back(node_gbps);
  }
  l.bytes = static_cast<std::uint64_t>(nodes) << 30;
  l.ops = static_cast<std::uint64_t>(nodes) * 64;
  l.aggregate_gbps = node_gbps * nodes;
  l.node_min_gbps = node_gbps;
  l.elapsed_us = 1e6;
  return l;
}

// A profile of storage rules alone: nothing to run, judged with --results.
Profile storage_profile(const std::string& rules) {
  return parse_profile("name: fs\nbackend: mpi\nrules:\n" + rules);
}

Verdict judge_storage_rule(const std::string& rule, const Results& run) {
  return evaluate_rule(storage_profile(rule).rules.at(0), run, nullptr, {false, true});
}

bool reason_mentions(const Verdict& v, const std::string& text) { return v.reason.find(text) != std::string::npos; }

Results record_of(const std::vector<StorageLine>& lines) {
  RecordBuilder b(8, 8);
  for (const auto& l : lines) b.line(to_json(l));
  return b.results();
}

const char* kAggregate8 = "  - {kind: storage, pattern: seq_read, nodes: 8, min: 2 GB/s}\n";

TEST(StorageRule, AggregateAtTheAskedNodeCountPassesAndFails) {
  // 1 node reads 0.5 GB/s, 8 nodes share a server that gives 1.1 GB/s in all.
  const Results slow = record_of({storage_line(1, 0.5), storage_line(8, 1.1 / 8)});
  const Verdict fail = judge_storage_rule(kAggregate8, slow);
  EXPECT_EQ(fail.status, Status::fail);
  EXPECT_NEAR(*fail.measured, 1.1, 1e-12);
  EXPECT_DOUBLE_EQ(*fail.expected, 2);
  EXPECT_NEAR(*fail.margin, -0.45, 1e-12);
  EXPECT_EQ(fail.unit, "GB/s");
  EXPECT_TRUE(reason_mentions(fail, "seq_read at 8 nodes")) << fail.reason;
  EXPECT_TRUE(reason_mentions(fail, "fuse.sshfs /shared/ds")) << fail.reason;

  const Verdict pass = judge_storage_rule(kAggregate8, record_of({storage_line(1, 0.5), storage_line(8, 0.3)}));
  EXPECT_EQ(pass.status, Status::pass) << pass.reason;
  EXPECT_NEAR(*pass.measured, 2.4, 1e-12);
}

TEST(StorageRule, TheWorstMatchingRowDecidesAndFiltersNarrowIt) {
  const Results run = record_of({storage_line(8, 0.4, "direct"), storage_line(8, 0.2, "buffered")});
  const Verdict any = judge_storage_rule(kAggregate8, run);
  EXPECT_EQ(any.status, Status::fail);
  EXPECT_NEAR(*any.measured, 1.6, 1e-12);
  EXPECT_TRUE(reason_mentions(any, "worst of 2 rows")) << any.reason;
  const Verdict direct = judge_storage_rule("  - {kind: storage, nodes: 8, mode: direct, min: 2 GB/s}\n", run);
  EXPECT_EQ(direct.status, Status::pass) << direct.reason;
  // Another pattern is not looked at.
  const Verdict write = judge_storage_rule("  - {kind: storage, pattern: seq_write, min: 1 GB/s}\n", run);
  EXPECT_EQ(write.status, Status::skip);
  EXPECT_TRUE(reason_mentions(write, "no path seq_write rows")) << write.reason;
}

TEST(StorageRule, PerNodeReadsTheSlowestNodeAndNamesIt) {
  StorageLine l = storage_line(4, 1.0);
  l.node_gbps[2] = 0.3;
  l.node_min_gbps = 0.3;
  const Verdict v =
      judge_storage_rule("  - {kind: storage, nodes: 4, metric: node_min_gbps, min: 0.5 GB/s}\n", record_of({l}));
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_NEAR(*v.measured, 0.3, 1e-12);
  EXPECT_TRUE(reason_mentions(v, "slowest node 0.300 GB/s on n2")) << v.reason;
}

TEST(StorageRule, WithoutNodesTheLargestCountMeasuredDecides) {
  const Verdict v = judge_storage_rule("  - {kind: storage, min: 1 GB/s}\n",
                              record_of({storage_line(1, 5.0), storage_line(2, 1.0), storage_line(4, 0.2)}));
  EXPECT_EQ(v.status, Status::fail);
  EXPECT_NEAR(*v.measured, 0.8, 1e-12);
  EXPECT_TRUE(reason_mentions(v, "at 4 nodes")) << v.reason;
}

TEST(StorageRule, ANodeCountNotMeasuredIsNotJudgedAndSaysWhatWas) {
  const Verdict v = judge_storage_rule(kAggregate8, record_of({storage_line(1, 5.0), storage_line(2, 1.0)}));
  EXPECT_EQ(v.status, Status::skip);
  EXPECT_FALSE(v.judged);
  EXPECT_TRUE(reason_mentions(v, "measured at 1, 2 nodes, not at 8")) << v.reason;
}

TEST(StorageRule, PageCacheFiguresNeverJudge) {
  // tmpfs: a RAM figure of 20 GB/s must not pass a storage floor.
  const Results cached = record_of({storage_line(8, 2.5, "buffered", "seq_read", "cached")});
  const Verdict v = judge_storage_rule(kAggregate8, cached);
  EXPECT_EQ(v.status, Status::skip);
  EXPECT_TRUE(reason_mentions(v, "page-cache figure")) << v.reason;
  // Beside a storage row, the cached one is left out and counted.
  const Verdict mixed = judge_storage_rule(
      kAggregate8, record_of({storage_line(8, 2.5, "buffered", "seq_read", "cached"), storage_line(8, 0.1)}));
  EXPECT_EQ(mixed.status, Status::fail);
  EXPECT_NEAR(*mixed.measured, 0.8, 1e-12);
  EXPECT_TRUE(reason_mentions(mixed, "1 page-cache rows left out")) << mixed.reason;
}

TEST(StorageRule, ARecordWithoutStorageLinesSaysWhichCommandWritesThem) {
  RecordBuilder b(2, 2);
  b.row("all_reduce", "global", 1 << 20, 5);
  const Verdict v = judge_storage_rule(kAggregate8, b.results());
  EXPECT_EQ(v.status, Status::skip);
  EXPECT_TRUE(reason_mentions(v, "fabricbench storage --out")) << v.reason;
  // Not optional and not --allow-skipped: such a rule fails the check.
  const Verdict strict = evaluate_rule(storage_profile(kAggregate8).rules.at(0), b.results(), nullptr, {});
  EXPECT_EQ(strict.status, Status::fail);
}

TEST(StorageRule, ParsesItsKeysAndRefusesWhatItCannotJudge) {
  const Rule r = storage_profile(
                     "  - {kind: storage, target: local, pattern: small_read, nodes: 2, mode: buffered, block: 1M, "
                     "metric: node_min_gbps, min: 800 MB/s}\n")
                     .rules.at(0);
  EXPECT_EQ(r.kind, RuleKind::storage);
  EXPECT_EQ(r.storage.target, "local");
  EXPECT_EQ(r.storage.pattern, "small_read");
  EXPECT_EQ(r.storage.nodes, 2);
  EXPECT_EQ(r.storage.mode, "buffered");
  EXPECT_EQ(r.storage.block_bytes, 1u << 20);
  EXPECT_EQ(r.storage_metric, StorageMetric::node_min_gbps);
  EXPECT_DOUBLE_EQ(r.limits.at(0).value, 0.8);
  EXPECT_EQ(r.name, "storage local small_read at 2 nodes node_min_gbps");
  EXPECT_FALSE(storage_profile("  - {kind: storage, nodes: all, min: 1 GB/s}\n").rules.at(0).storage.nodes);
  for (const char* bad : {
           "  - {kind: storage, pattern: random_read, min: 1 GB/s}\n",
           "  - {kind: storage, target: scratch, min: 1 GB/s}\n",
           "  - {kind: storage, metric: iops, min: 1 GB/s}\n",
           "  - {kind: storage, mode: cached, min: 1 GB/s}\n",
           "  - {kind: storage, nodes: 0, min: 1 GB/s}\n",
           "  - {kind: storage, max: 1 GB/s}\n",
           "  - {kind: storage, min: 10 us}\n",
           "  - {kind: storage, min: 0.8 of spec}\n",
           "  - {kind: storage, op: all_reduce, min: 1 GB/s}\n",
           "  - {kind: storage}\n",
       })
    EXPECT_THROW(storage_profile(bad), UsageError) << bad;
}

// The shipped storage profile: per-node floors at the most nodes measured.
// A cluster whose every node clears them passes; one node starved at 8
// nodes fails the read rule and is named, whatever 1 node alone managed.
TEST(StorageRule, TheShippedProfileNamesTheStarvedNodeAtTheMostNodes) {
  const Profile p = load_profile(std::string(FB_SOURCE_DIR) + "/profiles/storage-shared.yaml");
  ASSERT_EQ(p.rules.size(), 3u);
  std::vector<StorageLine> healthy;
  for (const char* pattern : {"seq_read", "small_read", "seq_write"})
    for (const int nodes : {1, 8}) healthy.push_back(storage_line(nodes, 1.2, "direct", pattern));
  for (const auto& rule : p.rules) {
    const Verdict v = evaluate_rule(rule, record_of(healthy), nullptr, {false, true});
    EXPECT_EQ(v.status, Status::pass) << rule.name << ": " << v.reason;
  }
  std::vector<StorageLine> starved = healthy;
  starved[1].node_gbps[5] = 0.3;  // seq_read at 8 nodes: n5 gets 0.3 GB/s
  starved[1].node_min_gbps = 0.3;
  const Verdict read = evaluate_rule(p.rules[0], record_of(starved), nullptr, {false, true});
  EXPECT_EQ(read.status, Status::fail) << read.reason;
  EXPECT_NEAR(*read.measured, 0.3, 1e-12);
  EXPECT_TRUE(reason_mentions(read, "at 8 nodes")) << read.reason;
  EXPECT_TRUE(reason_mentions(read, "n5")) << read.reason;
  EXPECT_EQ(evaluate_rule(p.rules[1], record_of(starved), nullptr, {false, true}).status, Status::pass);
}

}  // namespace
}  // namespace fb::accept
