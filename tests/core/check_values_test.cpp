// The per-dtype rules that keep the device check exact (check_values.hpp).
#include "fabricbench/core/check_values.hpp"

#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>

#include "fabricbench/core/check_inexact.hpp"

namespace fb {
namespace {

TEST(CheckValues, SummingReductionsFoldPatternsIntoTheExactRange) {
  EXPECT_EQ(check_value_limit(Dtype::bfloat16, Op::all_reduce, RedOp::sum, 8), 15);   // 256 / 8 = 32
  EXPECT_EQ(check_value_limit(Dtype::bfloat16, Op::all_reduce, RedOp::sum, 32), 8);   // 256 / 32
  EXPECT_EQ(check_value_limit(Dtype::bfloat16, Op::reduce, RedOp::avg, 256), 1);
  EXPECT_EQ(check_value_limit(Dtype::half, Op::reduce_scatter, RedOp::sum, 1024), 2);  // 2048 / 1024
  EXPECT_EQ(check_value_limit(Dtype::fp8_e4m3, Op::all_reduce, RedOp::sum, 2), 8);    // 16 / 2
  EXPECT_EQ(check_value_limit(Dtype::fp8_e5m2, Op::all_reduce, RedOp::sum, 1), 8);
  EXPECT_EQ(check_value_limit(Dtype::float32, Op::all_reduce, RedOp::sum, 4096), 15);
}

TEST(CheckValues, OtherOpsAndTypesKeepTheFullPattern) {
  EXPECT_EQ(check_value_limit(Dtype::bfloat16, Op::all_gather, RedOp::sum, 512), 15);  // nothing is summed
  EXPECT_EQ(check_value_limit(Dtype::bfloat16, Op::all_reduce, RedOp::max, 512), 15);  // max never rounds
  EXPECT_EQ(check_value_limit(Dtype::bfloat16, Op::all_reduce, RedOp::prod, 512), 15); // prod uses +-1
  EXPECT_EQ(check_value_limit(Dtype::int8, Op::all_reduce, RedOp::sum, 512), 15);      // wraps alike on both sides
}

TEST(CheckValues, EveryPartialSumStaysExactInTheNarrowType) {
  for (Dtype d : {Dtype::half, Dtype::bfloat16, Dtype::fp8_e4m3, Dtype::fp8_e5m2}) {
    for (int n : {1, 2, 3, 7, 8, 16}) {
      if (n > exact_integer_range(d)) continue;
      CheckContext c;
      c.rule = op_desc(Op::all_reduce).check();
      c.dtype = d;
      c.nranks = n;
      c.max_value = check_value_limit(d, Op::all_reduce, c.redop, n);
      for (std::uint64_t i = 0; i < 2000; ++i) {
        const float sum = check::reduced_value<float>(c, i);
        EXPECT_LE(sum, static_cast<float>(exact_integer_range(d))) << name(d) << " n=" << n << " i=" << i;
        EXPECT_GE(sum, static_cast<float>(n));  // every rank contributes at least 1: a lost one shows
      }
    }
  }
}

TEST(CheckValues, CopiesExpectTheRanksOwnInput) {
  CheckContext c;
  c.rule = op_desc(Op::copy_h2d_pinned).check();
  c.rank = 3;
  c.nranks = 4;
  c.layout.block = c.layout.out_elems = c.layout.in_elems = c.layout.count = 64;
  for (std::uint64_t j = 0; j < 64; ++j)
    EXPECT_EQ(check::expected_value<int>(c, j), check::input_value<int>(c, 3, j));
}

// Rounds a positive value to `mantissa` stored bits, to nearest even, as an
// fp8/bf16 store does (normal range only: enough for sums of ones).
double round_to(double x, int mantissa) {
  int e = 0;
  const double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  const double scale = std::ldexp(1.0, mantissa + 1);
  return std::ldexp(std::nearbyint(m * scale) / scale, e);
}

// n ones summed as a ring does: each hop adds one input to the partial sum and stores it in the narrow type.
double ring_sum_of_ones(int n, int mantissa) {
  double s = 1;
  for (int r = 1; r < n; ++r) s = round_to(s + 1, mantissa);
  return s;
}

// The same as a balanced tree (NCCL's Tree and NVLS orders differ again).
double tree_sum_of_ones(int n, int mantissa) {
  if (n == 1) return 1;
  return round_to(tree_sum_of_ones(n / 2, mantissa) + tree_sum_of_ones(n - n / 2, mantissa), mantissa);
}

TEST(CheckInexact, Fp8SumsPastTheExactRangeAreAcceptedNotCountedWrong) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  struct Case {
    Dtype dtype;
    int mantissa;
  };
  for (const Case c : {Case{Dtype::fp8_e4m3, 3}, Case{Dtype::fp8_e5m2, 2}, Case{Dtype::bfloat16, 7}}) {
    const int range = static_cast<int>(exact_integer_range(c.dtype));
    EXPECT_TRUE(check::exact(c.dtype, /*reduces=*/true, RedOp::sum, range));
    for (int n : {range + 1, range + 2, 2 * range, 4 * range + 3}) {
      EXPECT_FALSE(check::exact(c.dtype, /*reduces=*/true, RedOp::sum, n)) << name(c.dtype) << " n=" << n;
      const check::Bounds b = check::inexact_bounds(c.dtype, RedOp::sum, n);
      for (const double got : {ring_sum_of_ones(n, c.mantissa), tree_sum_of_ones(n, c.mantissa)})
        EXPECT_TRUE(check::within(b, got)) << name(c.dtype) << " n=" << n << " got " << got;
      // What the exact comparison saw: the ring sticks at the range, so past range + 1 every element was "wrong".
      if (n >= range + 2) {
        EXPECT_NE(ring_sum_of_ones(n, c.mantissa), round_to(n, c.mantissa)) << name(c.dtype) << " n=" << n;
      }
      EXPECT_FALSE(check::within(b, 0.0));                 // an element nobody wrote
      EXPECT_FALSE(check::within(b, range - 1.0));         // a contribution lost below the range
      EXPECT_FALSE(check::within(b, std::nan("")));
      EXPECT_FALSE(check::within(b, -static_cast<double>(n)));
    }
  }
}

TEST(CheckInexact, OnlyFloatSumsAndAveragesPastTheRangeAreInexact) {
  EXPECT_TRUE(check::exact(Dtype::fp8_e4m3, /*reduces=*/true, RedOp::max, 1024));  // max never rounds
  EXPECT_TRUE(check::exact(Dtype::fp8_e4m3, /*reduces=*/false, RedOp::sum, 1024));  // nothing summed
  EXPECT_TRUE(check::exact(Dtype::int8, /*reduces=*/true, RedOp::sum, 1024));      // wraps alike on both sides
  EXPECT_FALSE(check::exact(Dtype::fp8_e5m2, /*reduces=*/true, RedOp::avg, 16));
  const check::Bounds avg = check::inexact_bounds(Dtype::fp8_e5m2, RedOp::avg, 16);
  EXPECT_TRUE(avg.low_open);
  EXPECT_TRUE(check::within(avg, 1.0));
  EXPECT_FALSE(check::within(avg, 0.0));
}

TEST(CheckValues, IntegerAvgDividesInATypeThatHoldsTheRankCount) {
  // int8 at 128 ranks divided by (int8)128 = -128; uint8 at 256 by (uint8)256 = 0: SIGFPE.
  for (int n : {128, 256, 1000}) {
    for (Dtype d : {Dtype::int8, Dtype::uint8}) {
      CheckContext c;
      c.rule = op_desc(Op::all_reduce).check();
      c.dtype = d;
      c.redop = RedOp::avg;
      c.nranks = n;
      c.max_value = check_value_limit(d, Op::all_reduce, c.redop, n);
      for (std::uint64_t i = 0; i < 64; ++i) {
        long long sum = 0;
        for (int r = 0; r < n; ++r) sum += check::input_value<int>(c, r, i);
        if (d == Dtype::int8) {
          const auto wrapped = static_cast<std::int8_t>(static_cast<std::uint8_t>(sum & 0xff));
          EXPECT_EQ(check::reduced_value<std::int8_t>(c, i), static_cast<std::int8_t>(wrapped / n)) << n << " " << i;
        } else {
          const auto wrapped = static_cast<std::uint8_t>(sum & 0xff);
          EXPECT_EQ(check::reduced_value<std::uint8_t>(c, i), static_cast<std::uint8_t>(wrapped / n)) << n << " " << i;
        }
      }
    }
  }
}

TEST(CheckValues, AvgIsExactOnlyOverPowersOfTwo) {
  EXPECT_TRUE(check::avg_is_exact(1));
  EXPECT_TRUE(check::avg_is_exact(8));
  EXPECT_FALSE(check::avg_is_exact(3));
  EXPECT_FALSE(check::avg_is_exact(12));
}

}  // namespace
}  // namespace fb
