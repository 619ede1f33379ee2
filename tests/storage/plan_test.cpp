// What `fabricbench storage` plans: node counts, sizes, space, refusals; and
// one line's arithmetic from what the ranks measured.
#include <gtest/gtest.h>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/storage/line.hpp"
#include "fabricbench/storage/plan.hpp"

namespace fb::storage {
namespace {

StorageOptions base() {
  StorageOptions o;
  o.path = "/shared";
  return o;
}

std::string refusal(const StorageOptions& o) {
  try {
    validate(o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(StoragePlan, NodeCountsDoubleUpToEveryNode) {
  EXPECT_EQ(node_counts(base(), 1), (std::vector<int>{1}));
  EXPECT_EQ(node_counts(base(), 6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(node_counts(base(), 8), (std::vector<int>{1, 2, 4, 8}));
  StorageOptions o = base();
  o.node_counts = {4, 1, 4};
  EXPECT_EQ(node_counts(o, 4), (std::vector<int>{1, 4}));
  EXPECT_THROW(node_counts(o, 3), UsageError);
}

TEST(StoragePlan, PeakBytesIsTheLargerPattern) {
  StorageOptions o = base();
  o.bytes = (1u << 30) + 12345;  // whole blocks only
  o.block_sizes = {1 << 20, 16 << 20};
  o.files = 10;
  o.file_bytes = 1 << 20;
  EXPECT_EQ(sequential_bytes(o, 16 << 20), 1u << 30);
  EXPECT_EQ(peak_bytes_per_rank(o), 1u << 30);
  o.files = 2048;
  EXPECT_EQ(peak_bytes_per_rank(o), 2048u << 20);
  o.file_bytes = 64 << 20;
  EXPECT_EQ(small_block_bytes(o), 16u << 20);
}

TEST(StoragePlan, RefusalsNameTheFlag) {
  StorageOptions o = base();
  o.path.clear();
  EXPECT_NE(refusal(o).find("--path is required"), std::string::npos);
  o = base();
  o.block_sizes = {1000};
  EXPECT_NE(refusal(o).find("--block-sizes"), std::string::npos);
  o = base();
  o.bytes = 1 << 20;
  o.block_sizes = {16 << 20};
  EXPECT_NE(refusal(o).find("--bytes 1 MiB is smaller than the block size 16 MiB"), std::string::npos);
  o = base();
  o.files = 0;
  EXPECT_NE(refusal(o).find("--files 0"), std::string::npos);
  o = base();
  o.sequential = o.small_files = false;
  EXPECT_NE(refusal(o).find("--patterns"), std::string::npos);
  EXPECT_EQ(refusal(base()), "");
}

RankResult rank(int r, int node, std::uint64_t bytes, double us, std::vector<double> ops, Cache cache = Cache::dropped) {
  RankResult x;
  x.rank = r;
  x.node = node;
  x.figures.bytes = bytes;
  x.figures.ops = ops.size();
  x.figures.elapsed_us = us;
  x.figures.op_us = std::move(ops);
  x.figures.cache = cache;
  x.figures.o_direct = cache == Cache::bypassed;
  return x;
}

TEST(StorageLine, AggregateIsAllBytesOverTheSlowestRank) {
  LineContext c;
  c.target = "path";
  // Node 0: two ranks, 1 GB each, 1 s and 2 s; node 2: one rank, 1 GB in 4 s.
  const std::vector<RankResult> results{rank(0, 0, 1'000'000'000, 1e6, {10, 20}), rank(1, 0, 1'000'000'000, 2e6, {30}),
                                        rank(4, 2, 1'000'000'000, 4e6, {40, 50})};
  const StorageLine l = make_line(c, Pattern::seq_read, results, {"n0", "n1", "n2"});
  EXPECT_EQ(l.pattern, "seq_read");
  EXPECT_EQ(l.nodes, 2);
  EXPECT_EQ(l.ranks, 3);
  EXPECT_EQ(l.hosts, (std::vector<std::string>{"n0", "n2"}));
  EXPECT_EQ(l.bytes, 3'000'000'000u);
  EXPECT_DOUBLE_EQ(l.elapsed_us, 4e6);
  EXPECT_DOUBLE_EQ(l.aggregate_gbps, 0.75);
  ASSERT_EQ(l.node_gbps.size(), 2u);
  EXPECT_DOUBLE_EQ(l.node_gbps[0], 1.0);  // 2 GB over its slowest rank's 2 s
  EXPECT_DOUBLE_EQ(l.node_gbps[1], 0.25);
  EXPECT_DOUBLE_EQ(l.node_min_gbps, 0.25);
  EXPECT_DOUBLE_EQ(l.iops, 5 / 4.0);
  EXPECT_DOUBLE_EQ(l.latency_p50_us, 30);
  EXPECT_DOUBLE_EQ(l.latency_max_us, 50);
  EXPECT_EQ(l.cache, "dropped");
  EXPECT_FALSE(l.o_direct);
}

TEST(StorageLine, OneCachedRankMakesTheRowCached) {
  LineContext c;
  c.mode = Mode::direct;
  auto cached = rank(1, 1, 100, 1, {1}, Cache::cached);
  cached.figures.note = "stayed in memory";
  const StorageLine l = make_line(c, Pattern::seq_write, {rank(0, 0, 100, 1, {1}, Cache::bypassed), cached}, {"a", "b"});
  EXPECT_EQ(l.cache, "cached");
  EXPECT_EQ(l.note, "stayed in memory");
  EXPECT_FALSE(l.o_direct);  // not on every rank
  EXPECT_EQ(l.mode, "direct");
  const StorageLine d = make_line(c, Pattern::seq_write, {rank(0, 0, 100, 1, {1}, Cache::bypassed)}, {"a"});
  EXPECT_TRUE(d.o_direct);
  EXPECT_EQ(d.cache, "bypassed");
}

}  // namespace
}  // namespace fb::storage
