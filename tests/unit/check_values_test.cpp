// The per-dtype rules that keep the device check exact (check_values.hpp).
#include "fabricbench/core/check_values.hpp"

#include <gtest/gtest.h>

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

TEST(CheckValues, AvgIsExactOnlyOverPowersOfTwo) {
  EXPECT_TRUE(check::avg_is_exact(1));
  EXPECT_TRUE(check::avg_is_exact(8));
  EXPECT_FALSE(check::avg_is_exact(3));
  EXPECT_FALSE(check::avg_is_exact(12));
}

}  // namespace
}  // namespace fb
