// The bimodal statistic (core/modes.hpp) on synthetic iteration times: two
// modes are found with their shares, one mode never is, whatever its shape,
// its stragglers or its length.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "fabricbench/core/modes.hpp"

namespace fb {
namespace {

// `n` times around `median_us` with a relative spread `cv` (normal noise), from a fixed seed.
std::vector<double> around(std::size_t n, double median_us, double cv, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> noise(0.0, cv * median_us);
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::max(0.1 * median_us, median_us + noise(gen)));
  return out;
}

std::vector<double> joined(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(Modes, TwoModesAreFoundWithTheirShares) {
  // A link alternating between 10 Gbit/s and 1 Gbit/s: 70 iterations at 1 ms, 30 at 10 ms, 3% noise each.
  auto times = joined(around(70, 1000, 0.03, 1), around(30, 10000, 0.03, 2));
  std::shuffle(times.begin(), times.end(), std::mt19937(3));  // the order they came in does not matter
  const auto m = find_two_modes(times);
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->low_share, 0.70);
  EXPECT_NEAR(m->low_us, 1000, 30);
  EXPECT_NEAR(m->high_us, 10000, 300);
  EXPECT_GT(m->separation, kModesSeparation);
  EXPECT_EQ(modes_text(*m).rfind("70% of iterations at ", 0), 0u) << modes_text(*m);
  EXPECT_NE(modes_text(*m).find(", 30% at "), std::string::npos) << modes_text(*m);
}

TEST(Modes, TheSmallerModeNeedsItsShare) {
  // A slow mode of 20%: found; of 10% (a tail of stragglers under kModesMinShare), not.
  EXPECT_TRUE(find_two_modes(joined(around(80, 1000, 0.03, 4), around(20, 3000, 0.03, 5))).has_value());
  EXPECT_FALSE(find_two_modes(joined(around(90, 1000, 0.03, 4), around(10, 3000, 0.03, 5))).has_value());
}

TEST(Modes, ALinkThatFlapsWithTransitionsIsFound) {
  // 50 iterations at 1 ms, 40 at 4 ms and 10 caught mid-change anywhere between: still two modes.
  auto times = joined(around(50, 1000, 0.03, 11), around(40, 4000, 0.03, 12));
  std::mt19937 gen(13);
  std::uniform_real_distribution<double> between(1000, 4000);
  for (int i = 0; i < 10; ++i) times.push_back(between(gen));
  const auto m = find_two_modes(times);
  ASSERT_TRUE(m.has_value());
  EXPECT_NEAR(m->low_share, 0.55, 0.06);
  EXPECT_NEAR(m->high_us, 4000, 200);
}

TEST(Modes, OneModeNeverIs) {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    // A tight mode, a noisy one (20%), and a steady link whose 15% stragglers a loaded host spreads from 1.5x to 20x.
    EXPECT_FALSE(find_two_modes(around(100, 50, 0.01, seed)).has_value()) << seed;
    EXPECT_FALSE(find_two_modes(around(500, 50, 0.20, seed)).has_value()) << seed;
    auto straggled = around(85, 200, 0.05, seed);
    std::mt19937 gen(seed + 1000);
    std::uniform_real_distribution<double> late(1.5, 20.0);
    for (int i = 0; i < 15; ++i) straggled.push_back(200 * late(gen));
    EXPECT_FALSE(find_two_modes(straggled).has_value()) << seed;
  }
}

TEST(Modes, CloseModesAndShortRowsAreNotJudged) {
  // Two tight modes 1.9x apart: real (two loaded cores show such), but under kModesMinRatio.
  const auto close = joined(around(50, 1000, 0.001, 6), around(50, 1900, 0.001, 7));
  ASSERT_TRUE(split_modes(close).has_value());
  EXPECT_GT(split_modes(close)->separation, kModesSeparation);
  EXPECT_FALSE(find_two_modes(close).has_value());
  // Clear modes, but too few iterations to tell.
  const auto few = joined(around(12, 1000, 0.01, 8), around(7, 9000, 0.01, 9));
  EXPECT_FALSE(split_modes(few).has_value());
  EXPECT_FALSE(find_two_modes(few).has_value());
}

}  // namespace
}  // namespace fb
