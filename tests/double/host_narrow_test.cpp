// The host twins of the GPU's narrow floats (support/host_narrow.hpp) hold
// the bits CUDA's conversions give: round to nearest even, fp8 saturating,
// half overflowing to infinity, subnormals kept. Values from the formats'
// definitions (IEEE 754 binary16; OCP 8-bit floating point, E4M3 and E5M2).
#include <gtest/gtest.h>

#include <cmath>

#include "host_narrow.hpp"

namespace fb::test {
namespace {

template <typename S>
unsigned bits_of(float f) {
  return static_cast<unsigned>(S(f).bits);
}

TEST(HostNarrow, OneAndTheLargestFiniteValues) {
  EXPECT_EQ(bits_of<HostBf16>(1.0f), 0x3F80u);
  EXPECT_EQ(bits_of<HostHalf>(1.0f), 0x3C00u);
  EXPECT_EQ(bits_of<HostE4m3>(1.0f), 0x38u);
  EXPECT_EQ(bits_of<HostE5m2>(1.0f), 0x3Cu);
  EXPECT_EQ(bits_of<HostHalf>(65504.0f), 0x7BFFu);
  EXPECT_EQ(bits_of<HostE4m3>(448.0f), 0x7Eu);
  EXPECT_EQ(bits_of<HostE5m2>(57344.0f), 0x7Bu);
  EXPECT_EQ(bits_of<HostE4m3>(-2.0f), 0xC0u);
}

TEST(HostNarrow, OverflowSaturatesFp8AndMakesHalfInfinite) {
  EXPECT_EQ(bits_of<HostE4m3>(1000.0f), 0x7Eu);
  EXPECT_EQ(bits_of<HostE5m2>(1e6f), 0x7Bu);
  EXPECT_EQ(bits_of<HostHalf>(1e6f), 0x7C00u);
  EXPECT_TRUE(std::isinf(static_cast<float>(HostHalf(1e6f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(HostE4m3(NAN))));
}

TEST(HostNarrow, TiesRoundToEven) {
  // e4m3 steps by 2 from 16 to 32: 17 lies between 16 and 18, 19 between 18 and 20.
  EXPECT_EQ(static_cast<float>(HostE4m3(17.0f)), 16.0f);
  EXPECT_EQ(static_cast<float>(HostE4m3(19.0f)), 20.0f);
  EXPECT_EQ(static_cast<float>(HostE5m2(9.0f)), 8.0f);
  EXPECT_EQ(static_cast<float>(HostBf16(257.0f)), 256.0f);
  EXPECT_EQ(static_cast<float>(HostBf16(259.0f)), 260.0f);
  EXPECT_EQ(static_cast<float>(HostHalf(2049.0f)), 2048.0f);
}

TEST(HostNarrow, SubnormalsAreKept) {
  EXPECT_EQ(bits_of<HostE4m3>(std::ldexp(1.0f, -9)), 0x01u);  // the smallest e4m3
  EXPECT_EQ(bits_of<HostHalf>(std::ldexp(1.0f, -24)), 0x0001u);
  EXPECT_EQ(static_cast<float>(HostE5m2(std::ldexp(1.0f, -16))), std::ldexp(1.0f, -16));
}

TEST(HostNarrow, SmallIntegersRoundTrip) {
  for (int v = -16; v <= 16; ++v) {
    const auto f = static_cast<float>(v);
    EXPECT_EQ(static_cast<float>(HostE4m3(f)), f) << v;
    EXPECT_EQ(static_cast<float>(HostBf16(f)), f) << v;
    EXPECT_EQ(static_cast<float>(HostHalf(f)), f) << v;
  }
}

}  // namespace
}  // namespace fb::test
