#include "fabricbench/core/types.hpp"

#include <gtest/gtest.h>

#include "fabricbench/core/plan.hpp"

namespace fb {
namespace {

TEST(Types, NamesRoundTrip) {
  for (Op op : all_ops()) EXPECT_EQ(parse_op(name(op)), op);
  for (Dtype d : all_dtypes()) EXPECT_EQ(parse_dtype(name(d)), d);
  for (RedOp r : all_redops()) EXPECT_EQ(parse_redop(name(r)), r);
  EXPECT_EQ(parse_op("allreduce"), Op::all_reduce);
  EXPECT_EQ(parse_dtype("bf16"), Dtype::bfloat16);
  EXPECT_FALSE(parse_op("all-reduce-ish").has_value());
}

TEST(Types, Sizes) {
  EXPECT_EQ(dtype_bytes(Dtype::int8), 1u);
  EXPECT_EQ(dtype_bytes(Dtype::half), 2u);
  EXPECT_EQ(dtype_bytes(Dtype::float32), 4u);
  EXPECT_EQ(dtype_bytes(Dtype::float64), 8u);
}

TEST(Plan, CanonicalFormDiffersWhenOptionsDiffer) {
  RunOptions a;
  RunOptions b;
  EXPECT_EQ(fnv1a(canonical(a)), fnv1a(canonical(b)));
  b.iters = 21;
  EXPECT_NE(fnv1a(canonical(a)), fnv1a(canonical(b)));
  EXPECT_EQ(fnv1a(""), 0xcbf29ce484222325ull);
}

}  // namespace
}  // namespace fb
