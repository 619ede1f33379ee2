#include "fabricbench/core/types.hpp"

#include <gtest/gtest.h>

#include "fabricbench/core/plan.hpp"

namespace fb {
namespace {

TEST(Types, NamesRoundTrip) {
  for (Op op : all_ops()) EXPECT_EQ(parse_op(name(op)), op);
  for (Op op : copy_ops()) EXPECT_EQ(parse_op(name(op)), op);
  for (Dtype d : all_dtypes()) EXPECT_EQ(parse_dtype(name(d)), d);
  for (RedOp r : all_redops()) EXPECT_EQ(parse_redop(name(r)), r);
  EXPECT_EQ(parse_op("allreduce"), Op::all_reduce);
  EXPECT_EQ(parse_dtype("bf16"), Dtype::bfloat16);
  EXPECT_FALSE(parse_op("all-reduce-ish").has_value());
}

TEST(Types, CopyPathsHaveNoInPlaceVariant) {
  for (Op op : copy_ops()) {
    EXPECT_TRUE(is_copy_op(op));
    EXPECT_FALSE(has_in_place(op)) << name(op);
  }
  for (Op op : default_ops()) EXPECT_TRUE(has_in_place(op)) << name(op);
  EXPECT_FALSE(has_in_place(Op::pingpong));
  EXPECT_TRUE(is_pair_op(Op::copy_peer));
  EXPECT_FALSE(is_copy_op(Op::sendrecv));
  EXPECT_NE(allowed_ops().find("copy_d2h_pageable"), std::string::npos);
}

TEST(Types, Sizes) {
  EXPECT_EQ(dtype_bytes(Dtype::int8), 1u);
  EXPECT_EQ(dtype_bytes(Dtype::half), 2u);
  EXPECT_EQ(dtype_bytes(Dtype::float32), 4u);
  EXPECT_EQ(dtype_bytes(Dtype::float64), 8u);
}

}  // namespace
}  // namespace fb
