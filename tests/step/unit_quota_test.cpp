// The GPU step's compute comes in whole products; the quota cuts a step's
// compute into them so the total stays within half a product of its target.
#include <gtest/gtest.h>

#include "fabricbench/step/compute.hpp"

namespace fb::step {
namespace {

TEST(UnitQuota, StretchesShorterThanAUnitAddUpInsteadOfVanishing) {
  UnitQuota q(100.0);
  std::uint64_t units = 0;
  for (int i = 0; i < 1000; ++i) units += q.take(30.0);  // 30 ms of compute in 30 us stretches
  EXPECT_NEAR(static_cast<double>(units), 300.0, 0.5);
}

TEST(UnitQuota, EveryPrefixStaysWithinHalfAUnitOfItsTarget) {
  UnitQuota q(7.0);
  const double stretches[] = {0.0, 3.2, 19.9, 0.1, 70.0, 6.9, 1.0, 12.5, 0.0, 44.4};
  double owed = 0;
  std::uint64_t units = 0;
  for (double us : stretches) {
    owed += us;
    units += q.take(us);
    EXPECT_LE(std::abs(static_cast<double>(units) * 7.0 - owed), 3.5 + 1e-9) << "after " << owed << " us";
  }
}

TEST(UnitQuota, ExactMultiplesGiveExactCounts) {
  UnitQuota q(180.25);
  EXPECT_EQ(q.take(200 * 180.25), 200u);
  EXPECT_EQ(q.take(180.25), 1u);
  EXPECT_EQ(q.take(0.0), 0u);
}

TEST(UnitQuota, ANonPositiveUnitIsTakenAsOneMicrosecond) {
  UnitQuota q(0.0);
  EXPECT_EQ(q.unit_us(), 1.0);
  EXPECT_EQ(q.take(5.0), 5u);
}

}  // namespace
}  // namespace fb::step
