// core/cliff.hpp: a cliff is a fall to under an eighth of the best bandwidth
// reached before it, in the bandwidth regime, that no larger size climbs back
// from. The curves are shaped on what was measured (docs/run.md, "Cliffs").
#include "fabricbench/core/cliff.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace fb {
namespace {

// A curve from 8 B to 64 MiB by doubling: latency `alpha_us`, bandwidth `gbps`
// (GB/s = bytes per ns), each size's bandwidth multiplied by `scale(bytes)`.
template <class Scale>
std::vector<BandwidthPoint> curve(double alpha_us, double gbps, Scale scale) {
  std::vector<BandwidthPoint> out;
  for (std::uint64_t bytes = 8; bytes <= (64u << 20); bytes *= 2) {
    const double t = (alpha_us + static_cast<double>(bytes) / gbps / 1e3) / scale(bytes);
    out.push_back({bytes, static_cast<double>(bytes) / t / 1e3, t});
  }
  return out;
}

std::size_t index_of(const std::vector<BandwidthPoint>& c, std::uint64_t bytes) {
  for (std::size_t i = 0; i < c.size(); ++i)
    if (c[i].bytes == bytes) return i;
  return c.size();
}

TEST(Cliff, AnAlphaBetaCurveHasNone) {
  EXPECT_FALSE(find_cliff(curve(0.7, 7, [](auto) { return 1.0; })));
}

TEST(Cliff, AFallThatStaysIsOneAtItsFirstSize) {
  // Open MPI 4.1's all_reduce on 2 local ranks: about 7 GB/s to 16 MiB, 0.44 GB/s from 32 MiB on (16x).
  const auto c = curve(0.7, 7, [](std::uint64_t b) { return b >= (32u << 20) ? 1.0 / 16 : 1.0; });
  const auto cliff = find_cliff(c);
  ASSERT_TRUE(cliff);
  EXPECT_EQ(cliff->at, index_of(c, 32u << 20));
  EXPECT_NEAR(cliff->factor(), 16, 0.5);
}

TEST(Cliff, AFallAtTheLastSizeCountsForNothingLargerWasMeasured) {
  const auto c = curve(0.7, 7, [](std::uint64_t b) { return b == (64u << 20) ? 1.0 / 20 : 1.0; });
  const auto cliff = find_cliff(c);
  ASSERT_TRUE(cliff);
  EXPECT_EQ(cliff->at, c.size() - 1);
}

TEST(Cliff, ASizeThatFallsAndClimbsBackIsNone) {
  // A one-size spike: load on a shared host, or a link that flapped for one size; `check` judges those.
  EXPECT_FALSE(find_cliff(curve(0.7, 7, [](std::uint64_t b) { return b == (8u << 20) ? 1.0 / 20 : 1.0; })));
}

TEST(Cliff, ASagAsBuffersOutgrowTheCachesIsNone) {
  // All-gather on 2 local ranks: 14 GB/s to 8 MiB, then 8.5, 5.4, 5.7 (2.6x at most; 6.7x under load).
  const auto sag = [](std::uint64_t b) { return b >= (8u << 20) ? 1.0 / 7 : 1.0; };
  EXPECT_FALSE(find_cliff(curve(0.7, 14, sag)));
  const auto cliff = [](std::uint64_t b) { return b >= (8u << 20) ? 1.0 / 9 : 1.0; };
  EXPECT_TRUE(find_cliff(curve(0.7, 14, cliff))) << "the same shape past the factor is one";
}

TEST(Cliff, AGradualFallIsNoneHoweverFar) {
  // All-gather on 2 local ranks with the cores loaded: 15.3 GB/s to 8 MiB, then about 2x less at each size, 8.1x
  // below the best at 64 MiB: the caches and the load, not an algorithm switch (here 2.1x a size, 9x in all).
  const auto sag = [](std::uint64_t b) {
    double f = 1;
    for (std::uint64_t s = 16u << 20; s <= b; s *= 2) f /= 2.1;
    return f;
  };
  const auto c = curve(0.7, 15.3, sag);
  EXPECT_LT(c.back().gbps * kCliffFactor, c[index_of(c, 8u << 20)].gbps) << "the fall is past the factor";
  EXPECT_FALSE(find_cliff(c));
}

TEST(Cliff, ABestReachedInTheLatencyRegimeDoesNotCount) {
  // An eager broadcast on an emulated 1 Gbit/s link: 3-7 us up to 32 KiB ("4.9 GB/s"), then the link's 0.12 GB/s.
  std::vector<BandwidthPoint> c;
  for (std::uint64_t bytes = 8; bytes <= (1u << 20); bytes *= 2) {
    const double t =
        bytes <= (32u << 10) ? 3 + static_cast<double>(bytes) / 9e3 : 30 + static_cast<double>(bytes) / 120;
    c.push_back({bytes, static_cast<double>(bytes) / t / 1e3, t});
  }
  EXPECT_FALSE(find_cliff(c));
  // The same fall from sizes that took longer than any latency is one.
  for (auto& p : c)
    if (p.bytes <= (32u << 10)) p.time_us *= 100, p.gbps /= 100;
  for (auto& p : c)
    if (p.bytes > (32u << 10)) p.time_us *= 100 * 40, p.gbps /= 100 * 40;
  EXPECT_TRUE(find_cliff(c));
}

TEST(Cliff, ASweepThatStartsAtLargeSizesIsJudged) {
  auto c = curve(0.7, 7, [](std::uint64_t b) { return b >= (32u << 20) ? 1.0 / 16 : 1.0; });
  c.erase(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(index_of(c, 8u << 20)));  // -b 8M: 1.2 ms and up
  ASSERT_TRUE(find_cliff(c));
  EXPECT_EQ(c[find_cliff(c)->at].bytes, 32u << 20);
}

TEST(Cliff, TooShortACurveHasNone) {
  EXPECT_FALSE(find_cliff(std::vector<BandwidthPoint>{}));
  EXPECT_FALSE(find_cliff(std::vector<BandwidthPoint>{{8 << 20, 7, 1200}}));
}

}  // namespace
}  // namespace fb
