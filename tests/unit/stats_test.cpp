#include "fabricbench/core/stats.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "fabricbench/core/timing.hpp"

namespace fb {
namespace {

TEST(Summarize, OrderStatistics) {
  std::vector<double> v(100);
  std::iota(v.begin(), v.end(), 1.0);  // 1..100, shuffled order must not matter
  std::rotate(v.begin(), v.begin() + 37, v.end());
  const TimeStats s = summarize(v);
  EXPECT_EQ(s.iterations, 100u);
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.max_us, 100);
  EXPECT_DOUBLE_EQ(s.median_us, 50.5);
  EXPECT_DOUBLE_EQ(s.mean_us, 50.5);
  EXPECT_DOUBLE_EQ(s.p99_us, 99);
  EXPECT_NEAR(s.stddev_us, 29.0115, 1e-4);
}

TEST(Summarize, SmallAndEmpty) {
  EXPECT_EQ(summarize({}).iterations, 0u);
  const std::vector<double> one{7.0};
  const TimeStats s = summarize(one);
  EXPECT_DOUBLE_EQ(s.median_us, 7);
  EXPECT_DOUBLE_EQ(s.p99_us, 7);
  EXPECT_DOUBLE_EQ(s.stddev_us, 0);
  const std::vector<double> odd{3, 1, 2};
  EXPECT_DOUBLE_EQ(median_of(odd), 2);
  const std::vector<double> even{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(median_of(even), 2.5);
}

TEST(StopRule, WithoutBudgetRunsExactlyIters) {
  const TimingPlan plan{10, 1, 0};
  EXPECT_EQ(batch_size(plan, 5.0), 10);
  EXPECT_FALSE(should_stop(plan, std::vector<double>(9, 1.0), 0));
  EXPECT_TRUE(should_stop(plan, std::vector<double>(10, 1.0), 0));
}

TEST(StopRule, BudgetStopsOnStableMedianAfterIters) {
  const TimingPlan plan{10, 1, 1.0};
  std::vector<double> t(10, 100.0);
  EXPECT_FALSE(should_stop(plan, t, 0));      // no earlier median to compare with
  EXPECT_TRUE(should_stop(plan, t, 100.5));   // moved 0.5%: stable
  EXPECT_FALSE(should_stop(plan, t, 120.0));  // moved 20%: keep going
  EXPECT_FALSE(should_stop(plan, std::vector<double>(5, 100.0), 100.0));  // fewer than -n
}

TEST(StopRule, BudgetCapsTime) {
  const TimingPlan plan{20, 1, 0.001};                        // 1 ms
  EXPECT_TRUE(should_stop(plan, std::vector<double>(2, 600.0), 0));  // 1.2 ms spent
  EXPECT_EQ(batch_size(plan, 1000.0), 1);                      // slower than the budget: one at a time
  EXPECT_EQ(batch_size({20, 1, 10.0}, 1.0), 20);               // fast op: batches of -n
}

}  // namespace
}  // namespace fb
