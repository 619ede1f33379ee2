// The round-robin schedule of `fabricbench pairs`: every pair exactly once,
// no node twice in a round, N-1 rounds (N even) or N with one bye each (N odd).
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "fabricbench/core/pair_schedule.hpp"

namespace fb {
namespace {

// Checked with plain comparisons and one failure message each: 257 nodes
// make 33k pairs, and a gtest assertion per pair would dominate the run.
void check_schedule(int n) {
  SCOPED_TRACE(testing::Message() << "N = " << n);
  const auto rounds = round_robin(n);
  ASSERT_EQ(rounds.size(), static_cast<std::size_t>(n % 2 == 0 ? n - 1 : n));
  std::vector<char> seen(static_cast<std::size_t>(n * n), 0);
  std::vector<int> byes(static_cast<std::size_t>(n), 0);
  std::size_t pairs = 0;
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    const auto& round = rounds[r];
    ASSERT_EQ(round.pairs.size(), static_cast<std::size_t>(n / 2)) << "round " << r;
    std::vector<char> busy(static_cast<std::size_t>(n), 0);
    for (const auto& p : round.pairs) {
      ASSERT_TRUE(0 <= p.a && p.a < p.b && p.b < n) << "pair " << p.a << "-" << p.b;
      for (int v : {p.a, p.b})
        if (busy[static_cast<std::size_t>(v)]++) FAIL() << "node " << v << " twice in round " << r;
      if (seen[static_cast<std::size_t>(p.a * n + p.b)]++) FAIL() << "pair " << p.a << "-" << p.b << " twice";
      ++pairs;
    }
    if (n % 2 == 1) {
      ASSERT_TRUE(round.bye >= 0 && round.bye < n) << "round " << r << " has no bye";
      EXPECT_FALSE(busy[static_cast<std::size_t>(round.bye)]) << "the bye node also plays in round " << r;
      ++byes[static_cast<std::size_t>(round.bye)];
    } else {
      EXPECT_EQ(round.bye, -1);
    }
  }
  // With no pair twice, this many pairs is every pair.
  EXPECT_EQ(pairs, static_cast<std::size_t>(n * (n - 1) / 2));
  if (n % 2 == 1) {
    for (int v = 0; v < n; ++v) EXPECT_EQ(byes[static_cast<std::size_t>(v)], 1) << "byes of node " << v;
  }
}

TEST(PairSchedule, EveryPairOnceNoNodeTwiceInARoundForTwoTo257Nodes) {
  for (int n = 2; n <= 257; ++n) check_schedule(n);
}

TEST(PairSchedule, FewerThanTwoNodesHaveNoRounds) {
  EXPECT_TRUE(round_robin(0).empty());
  EXPECT_TRUE(round_robin(1).empty());
}

TEST(PairSchedule, RailsRunTheSameRoundTogether) {
  const auto rounds = rounds_on_rails(4, 2);
  ASSERT_EQ(rounds.size(), 3u);
  for (const auto& round : rounds) {
    ASSERT_EQ(round.size(), 4u);  // 2 pairs x 2 rails
    EXPECT_EQ(round[0].pair, round[2].pair);
    EXPECT_EQ(round[0].rail, 0);
    EXPECT_EQ(round[2].rail, 1);
  }
}

TEST(PairSchedule, PackedRetestsNeverReuseANodeOnARailWithinARound) {
  // Retests against one reference node (3) serialise; other rails and disjoint pairs share rounds.
  const std::vector<PairJob> jobs{{0, {0, 3}}, {0, {1, 3}}, {1, {0, 3}}, {0, {2, 4}}, {0, {2, 3}}};
  const auto rounds = pack_rounds(jobs);
  ASSERT_EQ(rounds.size(), 3u);
  std::size_t total = 0;
  for (const auto& round : rounds) {
    std::set<std::pair<int, int>> busy;
    for (const auto& j : round) {
      EXPECT_TRUE(busy.insert({j.rail, j.pair.a}).second);
      EXPECT_TRUE(busy.insert({j.rail, j.pair.b}).second);
    }
    total += round.size();
  }
  EXPECT_EQ(total, jobs.size());
  EXPECT_EQ(rounds[0], (std::vector<PairJob>{{0, {0, 3}}, {1, {0, 3}}, {0, {2, 4}}}));
}

}  // namespace
}  // namespace fb
