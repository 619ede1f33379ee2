#include "fabricbench/core/layout.hpp"

#include <gtest/gtest.h>

namespace fb {
namespace {

TEST(BusbwFactor, NcclTestsConvention) {
  EXPECT_DOUBLE_EQ(busbw_factor(Op::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::all_reduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::all_gather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::reduce_scatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::alltoall, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::reduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::sendrecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::pingpong, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::unidir, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::bidir, 2), 1.0);
}

TEST(Algbw, BytesOverTimeInGBps) {
  EXPECT_DOUBLE_EQ(algbw_gbps(Op::all_reduce, 1'000'000'000, 1e6), 1.0);  // 1 GB in 1 s
  EXPECT_DOUBLE_EQ(algbw_gbps(Op::bidir, 1'000'000'000, 1e6), 2.0);       // both directions count
  EXPECT_DOUBLE_EQ(algbw_gbps(Op::all_reduce, 100, 0.0), 0.0);
}

TEST(Layout, PerRankBufferOps) {
  const Layout l = layout_for(Op::all_reduce, Dtype::float32, 1002, 4);
  EXPECT_EQ(l.count, 250u);
  EXPECT_EQ(l.bytes, 1000u);  // rounded down to whole elements
  EXPECT_EQ(l.in_elems, 250u);
  EXPECT_EQ(l.out_elems, 250u);
}

TEST(Layout, GatheredBufferOpsRoundToRankMultiple) {
  const Layout ag = layout_for(Op::all_gather, Dtype::float32, 1000, 3);  // 250 floats -> 83 per rank
  EXPECT_EQ(ag.block, 83u);
  EXPECT_EQ(ag.in_elems, 83u);
  EXPECT_EQ(ag.out_elems, 249u);
  EXPECT_EQ(ag.bytes, 996u);
  const Layout rs = layout_for(Op::reduce_scatter, Dtype::float64, 1000, 3);
  EXPECT_EQ(rs.block, 41u);
  EXPECT_EQ(rs.in_elems, 123u);
  EXPECT_EQ(rs.out_elems, 41u);
  const Layout a2a = layout_for(Op::alltoall, Dtype::int8, 10, 4);
  EXPECT_EQ(a2a.block, 2u);
  EXPECT_EQ(a2a.in_elems, 8u);
  EXPECT_EQ(a2a.out_elems, 8u);
  EXPECT_EQ(a2a.bytes, 8u);
  EXPECT_EQ(layout_for(Op::all_gather, Dtype::float32, 8, 4).block, 0u);  // too small: caller skips
}

}  // namespace
}  // namespace fb
