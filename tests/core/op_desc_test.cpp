// The op table (op_desc.hpp) against the figures nccl-tests defines, worked
// out by hand here rather than read back from the table. That the table covers
// the enum exactly is checked by the compiler (src/core/op_desc.cpp).
#include "fabricbench/core/op_desc.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fabricbench/core/layout.hpp"
#include "fabricbench/model/formulas.hpp"

namespace fb {
namespace {

TEST(OpTable, GatherAndScatterBusbwIsNcclTestsRingFactor) {
  // nccl-tests gather.cu / scatter.cu, GetBw: busBw = algBw * (nranks-1)/nranks.
  EXPECT_DOUBLE_EQ(busbw_factor(Op::gather, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::gather, 3), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::scatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::gather, 1), 0.0);  // one rank moves nothing over a link
  // 4 MiB gathered on 4 ranks in 1 ms: algbw = 4194304 B / 1e-3 s = 4.194304 GB/s, busbw 3/4 of it.
  const double algbw = algbw_gbps(Op::gather, 4u << 20, 1000.0);
  EXPECT_DOUBLE_EQ(algbw, 4.194304);
  EXPECT_DOUBLE_EQ(algbw * busbw_factor(Op::gather, 4), 3.145728);
}

TEST(OpTable, GatherLayoutIsOneBlockInAndNBlocksOutAtTheRoot) {
  // nccl-tests GatherGetCollByteCount: sendcount = count/nranks, recvcount = sendcount*nranks,
  // and the row's size is the gathered buffer. 1000 B of float on 3 ranks: 250 floats, 83 per rank.
  const Layout g = layout_for(Op::gather, Dtype::float32, 1000, 3);
  EXPECT_EQ(g.block, 83u);
  EXPECT_EQ(g.in_elems, 83u);
  EXPECT_EQ(g.out_elems, 249u);
  EXPECT_EQ(g.count, 249u);
  EXPECT_EQ(g.bytes, 996u);
}

TEST(OpTable, ScatterLayoutIsNBlocksInAndOneBlockOut) {
  // nccl-tests ScatterGetCollByteCount: recvcount = count/nranks, sendcount = recvcount*nranks.
  // 1000 B of double on 3 ranks: 125 doubles, 41 per rank, 123 sent by the root.
  const Layout s = layout_for(Op::scatter, Dtype::float64, 1000, 3);
  EXPECT_EQ(s.block, 41u);
  EXPECT_EQ(s.in_elems, 123u);
  EXPECT_EQ(s.out_elems, 41u);
  EXPECT_EQ(s.count, 123u);
  EXPECT_EQ(s.bytes, 984u);
  EXPECT_EQ(layout_for(Op::scatter, Dtype::float32, 12, 4).block, 0u);  // under one float per rank: skipped
}

TEST(OpTable, NamesAndAliasesParse) {
  for (const OpDesc& d : kOpTable) EXPECT_EQ(parse_op(d.name), d.op) << d.name;
  // nccl-tests binary names without '_' and common spellings.
  EXPECT_EQ(parse_op("allreduce"), Op::all_reduce);
  EXPECT_EQ(parse_op("allgather"), Op::all_gather);
  EXPECT_EQ(parse_op("reducescatter"), Op::reduce_scatter);
  EXPECT_EQ(parse_op("bcast"), Op::broadcast);
  EXPECT_EQ(parse_op("all_to_all"), Op::alltoall);
  EXPECT_EQ(parse_op("gather"), Op::gather);
  EXPECT_EQ(parse_op("scatter"), Op::scatter);
  EXPECT_EQ(name(Op::gather), "gather");
  EXPECT_EQ(name(Op::scatter), "scatter");
  EXPECT_FALSE(parse_op("").has_value());  // the empty alias slots are no name
  EXPECT_FALSE(parse_op("gatherv").has_value());
  std::set<std::string> names;
  for (const OpDesc& d : kOpTable) names.insert(std::string(d.name));
  EXPECT_EQ(names.size(), kOpTable.size());  // no two ops share a name
}

TEST(OpTable, GatherAndScatterAreRootedCollectivesWithAnInPlaceForm) {
  for (Op op : {Op::gather, Op::scatter}) {
    EXPECT_TRUE(has_root(op)) << name(op);
    EXPECT_FALSE(is_reduction(op)) << name(op);
    EXPECT_TRUE(has_in_place(op)) << name(op);  // MPI_IN_PLACE at the root
    EXPECT_FALSE(is_pair_op(op)) << name(op);
    EXPECT_FALSE(is_copy_op(op)) << name(op);
  }
  EXPECT_TRUE(has_root(Op::broadcast));
  EXPECT_TRUE(has_root(Op::reduce));
  EXPECT_FALSE(has_root(Op::all_gather));
  EXPECT_TRUE(is_reduction(Op::reduce_scatter));
  EXPECT_FALSE(is_reduction(Op::alltoall));
}

TEST(OpTable, SweepListsKeepTheirMembers) {
  const std::vector<Op> six{Op::all_reduce, Op::all_gather, Op::reduce_scatter,
                            Op::broadcast,  Op::alltoall,   Op::sendrecv};
  EXPECT_EQ(std::vector<Op>(default_ops().begin(), default_ops().end()), six);  // gather, scatter: asked for only
  const std::set<Op> comm(all_ops().begin(), all_ops().end());
  EXPECT_EQ(comm.size(), 12u);  // ten before, plus gather and scatter
  EXPECT_TRUE(comm.count(Op::gather) && comm.count(Op::scatter));
  EXPECT_FALSE(comm.count(Op::copy_d2d_ce));
  EXPECT_EQ(copy_ops().size(), 10u);
  EXPECT_EQ(all_ops().size() + copy_ops().size(), kOpCount);
  EXPECT_NE(allowed_ops().find("gather, scatter"), std::string::npos);
}

TEST(OpTable, ModelCountsGatherAndScatterAsLinearHopsOfTheRingFactor) {
  // A root that receives (or sends) n-1 blocks: n-1 latencies, (n-1)/n of the buffer on its link.
  EXPECT_EQ(model::ring_steps(Op::gather, 4), 3);
  EXPECT_EQ(model::ring_steps(Op::scatter, 1), 0);
  EXPECT_DOUBLE_EQ(model::ring_wire_bytes(Op::scatter, 4, 4096), 3072.0);
  // The ops that were there keep their figures.
  EXPECT_EQ(model::ring_steps(Op::all_reduce, 4), 6);
  EXPECT_EQ(model::ring_steps(Op::sendrecv, 1), 1);
  EXPECT_DOUBLE_EQ(model::ring_wire_bytes(Op::all_reduce, 4, 4096), 6144.0);
  EXPECT_DOUBLE_EQ(model::ring_wire_bytes(Op::pingpong, 2, 100), 100.0);
}

TEST(OpSet, HoldsExactlyWhatWasAdded) {
  OpSet s;
  EXPECT_TRUE(s.empty());
  s.add(Op::gather).add(Op::kernel_launch);
  EXPECT_TRUE(s.has(Op::gather));
  EXPECT_TRUE(s.has(Op::kernel_launch));
  EXPECT_FALSE(s.has(Op::scatter));
  EXPECT_EQ(s.names(), "gather, kernel_launch");
  constexpr OpSet rooted = OpSet::where([](const OpDesc& d) { return d.rooted; });
  EXPECT_EQ(rooted.names(), "broadcast, reduce, gather, scatter");
}

}  // namespace
}  // namespace fb
