// The check must accept a correct result and count every wrong element. The
// "collectives" here move data between in-process buffers the way MPI would,
// independently of the expected-value code under test.
#include "fabricbench/core/host_check.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace fb {
namespace {

struct Ranks {
  Op op = Op::all_reduce;
  std::vector<std::vector<float>> in;
  std::vector<std::vector<float>> out;
  std::vector<CheckContext> ctx;
};

Ranks filled(Op op, int n, std::uint64_t bytes, RedOp redop = RedOp::sum) {
  Ranks r;
  r.op = op;
  for (int q = 0; q < n; ++q) {
    CheckContext c;
    c.rule = op_desc(op).check();
    c.dtype = Dtype::float32;
    c.redop = redop;
    c.rank = q;
    c.nranks = n;
    c.root = 0;
    c.source = is_pair_op(op) ? (q == 0 ? 1 : 0) : -1;
    c.layout = layout_for(op, Dtype::float32, bytes, is_pair_op(op) ? 2 : n);
    r.in.emplace_back(c.layout.in_elems);
    r.out.emplace_back(c.layout.out_elems);
    fill_for_check(c, r.in.back().data(), r.out.back().data());
    r.ctx.push_back(c);
  }
  return r;
}

float reduce(RedOp op, float a, float b) {
  switch (op) {
    case RedOp::prod:
      return a * b;
    case RedOp::max:
      return std::max(a, b);
    case RedOp::min:
      return std::min(a, b);
    default:
      return a + b;
  }
}

void simulate(Ranks& r) {
  const int n = static_cast<int>(r.in.size());
  const CheckContext& c = r.ctx[0];
  const std::uint64_t b = c.layout.block;
  for (int q = 0; q < n; ++q) {
    auto& out = r.out[static_cast<std::size_t>(q)];
    for (std::uint64_t j = 0; j < out.size(); ++j) {
      switch (r.op) {
        case Op::all_reduce:
        case Op::reduce_scatter: {
          const std::uint64_t src = r.op == Op::all_reduce ? j : static_cast<std::uint64_t>(q) * b + j;
          float acc = r.in[0][src];
          for (int p = 1; p < n; ++p) acc = reduce(c.redop, acc, r.in[static_cast<std::size_t>(p)][src]);
          out[j] = acc;
          break;
        }
        case Op::all_gather:
          out[j] = r.in[j / b][j % b];
          break;
        case Op::alltoall:
          out[j] = r.in[j / b][static_cast<std::uint64_t>(q) * b + j % b];
          break;
        case Op::gather:  // root 0 receives every rank's block in rank order; the others receive nothing
          if (q == 0) out[j] = r.in[j / b][j % b];
          break;
        case Op::scatter:  // rank q receives block q of root 0's input
          out[j] = r.in[0][static_cast<std::uint64_t>(q) * b + j];
          break;
        case Op::broadcast:
          out[j] = r.in[0][j];
          break;
        case Op::sendrecv:
          out[j] = r.in[static_cast<std::size_t>((q - 1 + n) % n)][j];
          break;
        case Op::pingpong:
        case Op::bidir:
          out[j] = r.in[static_cast<std::size_t>(1 - q)][j];
          break;
        default:
          break;
      }
    }
  }
}

std::uint64_t total_wrong(const Ranks& r) {
  std::uint64_t w = 0;
  for (std::size_t q = 0; q < r.out.size(); ++q) w += verify_output(r.ctx[q], r.out[q].data()).wrong;
  return w;
}

class EveryCollective : public ::testing::TestWithParam<Op> {};

TEST_P(EveryCollective, CorrectResultHasNoWrongElements) {
  for (int n : {2, 3, 4, 7}) {
    Ranks r = filled(GetParam(), n, 4096);
    simulate(r);
    EXPECT_EQ(total_wrong(r), 0u) << name(GetParam()) << " n=" << n;
  }
}

// A gather has an output on its root only; every other op of the list on every rank.
int ranks_with_output(Op op, int n) { return op == Op::gather ? 1 : n; }

TEST_P(EveryCollective, UnwrittenOutputIsWrong) {
  Ranks r = filled(GetParam(), 4, 4096);  // outputs poisoned, never written
  EXPECT_EQ(total_wrong(r), ranks_with_output(GetParam(), 4) * r.ctx[0].layout.out_elems) << name(GetParam());
}

TEST_P(EveryCollective, OneCorruptElementCountsOnce) {
  Ranks r = filled(GetParam(), 4, 4096);
  simulate(r);
  r.out[GetParam() == Op::gather ? 0 : 2][5] += 1.0f;
  EXPECT_EQ(total_wrong(r), 1u);
}

INSTANTIATE_TEST_SUITE_P(HostCheck, EveryCollective,
                         ::testing::Values(Op::all_reduce, Op::all_gather, Op::reduce_scatter, Op::broadcast,
                                           Op::alltoall, Op::gather, Op::scatter, Op::sendrecv),
                         [](const auto& info) { return std::string(name(info.param)); });

TEST(HostCheck, MisplacedBlockIsCaught) {
  Ranks r = filled(Op::all_gather, 4, 4096);
  simulate(r);
  const std::uint64_t b = r.ctx[0].layout.block;
  // Swap the blocks from ranks 1 and 2 on rank 0: sums and counts are unchanged.
  std::swap_ranges(r.out[0].begin() + static_cast<std::ptrdiff_t>(b), r.out[0].begin() + static_cast<std::ptrdiff_t>(2 * b),
                   r.out[0].begin() + static_cast<std::ptrdiff_t>(2 * b));
  EXPECT_GT(total_wrong(r), b);  // nearly every swapped element differs
}

TEST(HostCheck, MissingRankContributionIsCaught) {
  Ranks r = filled(Op::all_reduce, 4, 4096);
  simulate(r);
  for (std::size_t j = 0; j < r.out[1].size(); ++j) r.out[1][j] -= r.in[3][j];  // rank 3 left out
  EXPECT_EQ(total_wrong(r), r.out[1].size());
}

TEST(HostCheck, EveryReductionOperator) {
  for (RedOp op : {RedOp::sum, RedOp::prod, RedOp::max, RedOp::min}) {
    Ranks r = filled(Op::all_reduce, 5, 2048, op);
    simulate(r);
    EXPECT_EQ(total_wrong(r), 0u) << name(op);
  }
}

TEST(HostCheck, GatherAndScatterCatchABlockFromTheWrongRank) {
  // The root's gathered output with rank 2's block in rank 1's place, and a
  // scatter that hands rank 1 the block meant for rank 2: both are wrong.
  Ranks g = filled(Op::gather, 3, 3 * 4 * 64);
  simulate(g);
  const std::uint64_t b = g.ctx[0].layout.block;
  for (std::uint64_t j = 0; j < b; ++j) g.out[0][b + j] = g.in[2][j];
  EXPECT_GT(total_wrong(g), b / 2);
  Ranks s = filled(Op::scatter, 3, 3 * 4 * 64);
  simulate(s);
  for (std::uint64_t j = 0; j < b; ++j) s.out[1][j] = s.in[0][2 * b + j];
  EXPECT_GT(total_wrong(s), b / 2);
}

TEST(HostCheck, ScatterWritesOnlyTheRootsInput) {
  // In-place, a rank's output is its block of the buffer that holds the
  // input. Had a non-root's own (ignored) input been written there, a scatter
  // that delivered nothing would still match wherever its pattern happens to
  // equal the root's (1 in 15): every element must stay wrong instead.
  const int n = 4;
  for (int q = 1; q < n; ++q) {
    CheckContext c;
    c.rule = op_desc(Op::scatter).check();
    c.rank = q;
    c.nranks = n;
    c.root = 0;
    c.layout = layout_for(Op::scatter, Dtype::float32, n * 4 * 300, n);
    std::vector<float> buffer(c.layout.in_elems);
    float* mine = buffer.data() + static_cast<std::ptrdiff_t>(q) * static_cast<std::ptrdiff_t>(c.layout.block);
    fill_for_check(c, buffer.data(), mine);
    EXPECT_EQ(verify_output(c, mine).wrong, c.layout.out_elems) << "rank " << q;
  }
}

TEST(HostCheck, ReduceChecksOnlyTheRoot) {
  CheckContext c;
  c.rule = op_desc(Op::reduce).check();
  c.rank = 1;
  c.nranks = 2;
  c.root = 0;
  c.layout = layout_for(Op::reduce, Dtype::float32, 64, 2);
  EXPECT_FALSE(has_checked_output(c));
  std::vector<float> garbage(c.layout.out_elems, -1.0f);
  EXPECT_EQ(verify_output(c, garbage.data()).wrong, 0u);
}

TEST(HostCheck, IntegerTypesWrapLikeMpi) {
  CheckContext c;
  c.rule = op_desc(Op::all_reduce).check();
  c.dtype = Dtype::int8;
  c.nranks = 40;  // 40 ranks of values up to 15 overflow int8
  c.layout = layout_for(Op::all_reduce, Dtype::int8, 256, 40);
  std::vector<std::vector<std::int8_t>> in(40, std::vector<std::int8_t>(256));
  std::vector<std::int8_t> out(256);
  for (int q = 0; q < 40; ++q) {
    c.rank = q;
    fill_for_check(c, in[static_cast<std::size_t>(q)].data(), out.data());
  }
  for (std::size_t j = 0; j < 256; ++j) {
    int acc = 0;
    for (int q = 0; q < 40; ++q) acc += in[static_cast<std::size_t>(q)][j];
    out[j] = static_cast<std::int8_t>(acc);  // what MPI's int8 sum stores
  }
  c.rank = 0;
  EXPECT_EQ(verify_output(c, out.data()).wrong, 0u);
  EXPECT_FALSE(host_checkable(Dtype::bfloat16));
}

}  // namespace
}  // namespace fb
