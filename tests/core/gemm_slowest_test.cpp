// `fabricbench gemm`'s slowest GPU per datatype, from gemm lines built here.
#include "fabricbench/core/gemm_slowest.hpp"

#include <gtest/gtest.h>

namespace fb {
namespace {

GemmLine gemm(int rank, const char* host, Dtype d, double tflops) {
  GemmLine l;
  l.rank = rank;
  l.host = host;
  l.device = rank % 2;
  l.pci_bus_id = "0000:1" + std::to_string(rank) + ":00.0";
  l.dtype = std::string(name(d));
  l.tflops = tflops;
  return l;
}

TEST(GemmSlowest, TheSlowestRankOfEachDatatypeInTheAskedOrder) {
  const std::vector<GemmLine> lines{gemm(0, "n0", Dtype::bfloat16, 800), gemm(0, "n0", Dtype::half, 790),
                                    gemm(1, "n0", Dtype::bfloat16, 600), gemm(1, "n0", Dtype::half, 795),
                                    gemm(2, "n1", Dtype::bfloat16, 700), gemm(2, "n1", Dtype::half, 400)};
  // fp32 was asked for but has no line: left out rather than reported as rank 0 at 0 TFLOP/s.
  const auto s = slowest_per_dtype(lines, {Dtype::half, Dtype::float32, Dtype::bfloat16});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].dtype, "half");
  EXPECT_EQ(s[0].rank, 2);
  EXPECT_EQ(s[0].host, "n1");
  EXPECT_EQ(s[0].device, 0);
  EXPECT_EQ(s[0].pci_bus_id, "0000:12:00.0");
  EXPECT_DOUBLE_EQ(s[0].tflops, 400);
  EXPECT_DOUBLE_EQ(s[0].fastest_tflops, 795);
  EXPECT_NEAR(s[0].below_fastest_pct, 100.0 * 395 / 795, 1e-12);
  EXPECT_EQ(s[1].dtype, "bfloat16");
  EXPECT_EQ(s[1].rank, 1);
  EXPECT_DOUBLE_EQ(s[1].fastest_tflops, 800);
  EXPECT_DOUBLE_EQ(s[1].below_fastest_pct, 25);
}

TEST(GemmSlowest, EqualRatesNameTheFirstRankAndNothingBelowTheFastest) {
  const auto s =
      slowest_per_dtype({gemm(3, "a", Dtype::float32, 50), gemm(4, "b", Dtype::float32, 50)}, {Dtype::float32});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].rank, 3);
  EXPECT_DOUBLE_EQ(s[0].below_fastest_pct, 0);
}

// A run of several shapes (`gemm --shapes-of`): every rank is slower at the
// small shape, so the GPU to name is the one furthest below its peers at the
// same shape, not whichever rank's small product came last.
TEST(GemmSlowest, RanksAreComparedAtTheSameShape) {
  auto shaped = [](GemmLine l, int m) {
    l.m = l.n = l.k = m;
    return l;
  };
  const std::vector<GemmLine> lines{
      shaped(gemm(0, "n0", Dtype::bfloat16, 800), 8192), shaped(gemm(0, "n0", Dtype::bfloat16, 300), 1024),
      shaped(gemm(1, "n1", Dtype::bfloat16, 600), 8192), shaped(gemm(1, "n1", Dtype::bfloat16, 290), 1024)};
  const auto s = slowest_per_dtype(lines, {Dtype::bfloat16});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].rank, 1);
  EXPECT_DOUBLE_EQ(s[0].tflops, 600);
  EXPECT_DOUBLE_EQ(s[0].fastest_tflops, 800);
  EXPECT_DOUBLE_EQ(s[0].below_fastest_pct, 25);
}

TEST(GemmSlowest, NoLinesNoEntries) { EXPECT_TRUE(slowest_per_dtype({}, {Dtype::bfloat16}).empty()); }

}  // namespace
}  // namespace fb
