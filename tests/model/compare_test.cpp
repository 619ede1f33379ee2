// `report compare`: rows matched per op, scope and size; flagged only beyond
// their own [min, p99] spread.
#include "fabricbench/model/compare.hpp"

#include <gtest/gtest.h>

#include "model_rows.hpp"

namespace fb::model {
namespace {

TEST(Compare, RatiosAndRowsBeyondTheirSpread) {
  using test::model_row;
  const Results a = test::make_results({model_row("all_reduce", "global", 2, 1024, 10.0, 0.10),
                                        model_row("all_reduce", "global", 2, 4096, 20.0, 0.10),
                                        model_row("all_reduce", "global", 2, 16384, 40.0, 0.10),
                                        model_row("all_gather", "global", 2, 1024, 5.0)});
  const Results b = test::make_results({model_row("all_reduce", "global", 2, 1024, 10.5, 0.10),  // inside the spread
                                        model_row("all_reduce", "global", 2, 4096, 30.0, 0.10),  // slower
                                        model_row("all_reduce", "global", 2, 16384, 20.0, 0.10),  // faster
                                        model_row("sendrecv", "global", 2, 1024, 3.0)});
  const Comparison c = compare_results(a, b);
  ASSERT_EQ(c.rows.size(), 5u);
  EXPECT_EQ(c.rows[0].diff, Difference::same);
  EXPECT_DOUBLE_EQ(c.rows[0].ratio, 1.05);
  EXPECT_EQ(c.rows[1].diff, Difference::slower);
  EXPECT_DOUBLE_EQ(c.rows[1].ratio, 1.5);
  EXPECT_EQ(c.rows[2].diff, Difference::faster);
  EXPECT_EQ(c.rows[3].diff, Difference::only_a);
  EXPECT_EQ(c.rows[4].diff, Difference::only_b);
  EXPECT_EQ(c.rows[4].op, "sendrecv");
  EXPECT_EQ(c.slower, 1);
  EXPECT_EQ(c.faster, 1);
  EXPECT_EQ(c.only_a, 1);
  EXPECT_EQ(c.only_b, 1);
}

// An imported nccl-tests row holds one time (its mean): 1% apart is neither
// slower nor faster beyond a spread nobody measured.
TEST(Compare, RowsOfOneIterationHaveNoSpreadToJudgeBy) {
  Measurement one = test::model_row("all_gather", "global", 1, 1024, 6.76, 0.0);
  one.time.iterations = 1;
  Measurement other = one;
  other.time.min_us = other.time.median_us = other.time.p99_us = other.time.max_us = 6.83;
  const Comparison c = compare_results(test::make_results({one}), test::make_results({other}));
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].diff, Difference::no_spread);
  EXPECT_NEAR(c.rows[0].ratio, 6.83 / 6.76, 1e-12);
  EXPECT_EQ(c.slower + c.faster, 0);
  EXPECT_EQ(c.no_spread, 1);
}

TEST(Compare, WideSpreadHidesADifferentMedian) {
  // 30% apart in median, but each row's iterations range over +-40%.
  const Results a = test::make_results({test::model_row("alltoall", "intra", 8, 1 << 20, 100.0, 0.4)});
  const Results b = test::make_results({test::model_row("alltoall", "intra", 8, 1 << 20, 130.0, 0.4)});
  const Comparison c = compare_results(a, b);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].diff, Difference::same);
  EXPECT_DOUBLE_EQ(c.rows[0].ratio, 1.3);
}

// Headers this machine cannot write (another MPI library, a record before
// 1.19): the comparison names what differs beside the fabric, and guesses
// nothing for an imported record, which names no MPI library.
TEST(Compare, UnlikeSetupsAreNamedFromTheHeaders) {
  Results a = test::make_results({test::model_row("all_reduce", "global", 2, 1024, 10.0)});
  Results b = test::make_results({test::model_row("all_reduce", "global", 2, 1024, 9.0)});
  a.header.mpi_library = "Open MPI v4.1.4";  // schema 1.18: no level, every run asked for FUNNELED
  b.header.mpi_library = "Open MPI v5.0.6";
  b.header.mpi_thread_level = "MPI_THREAD_SINGLE";
  const Comparison c = compare_results(a, b);
  ASSERT_EQ(c.unlike.size(), 2u);
  EXPECT_NE(c.unlike[0].find("a ran Open MPI v4.1.4, b Open MPI v5.0.6"), std::string::npos) << c.unlike[0];
  EXPECT_NE(c.unlike[1].find("a ran MPI at MPI_THREAD_FUNNELED, b at MPI_THREAD_SINGLE"), std::string::npos)
      << c.unlike[1];
  a.header.mpi_library.clear();
  a.header.command = "import";
  EXPECT_TRUE(compare_results(a, b).unlike.empty());
  a.header = b.header;
  EXPECT_TRUE(compare_results(a, b).unlike.empty()) << "alike setups say nothing";
}

// A record before 1.20 timed MPI iterations one by one, where ranks out of
// step made single 8-16 B iterations up to 1.8x slower than their pace; one
// since times them in groups. Headers this binary cannot write (1.19).
TEST(Compare, AnMpiRecordThatTimedShortIterationsOneByOneIsNamed) {
  Results a = test::make_results({test::model_row("all_reduce", "global", 2, 1024, 10.0)});
  Results b = test::make_results({test::model_row("all_reduce", "global", 2, 1024, 9.0)});
  for (Results* r : {&a, &b}) {
    r->header.mpi_library = "Open MPI v4.1.4";
    r->header.mpi_thread_level = "MPI_THREAD_FUNNELED";
    r->header.backend = "mpi";
  }
  a.header.schema_version = "1.19";
  b.header.schema_version = "1.20";
  const Comparison c = compare_results(a, b);
  ASSERT_EQ(c.unlike.size(), 1u);
  EXPECT_NE(c.unlike[0].find("a timed MPI iterations under 50 us one by one, b in groups"), std::string::npos)
      << c.unlike[0];
  EXPECT_NE(compare_results(b, a).unlike.at(0).find("a timed MPI iterations under 50 us in groups, b one by one"),
            std::string::npos);
  a.header.schema_version = "1.20";
  EXPECT_TRUE(compare_results(a, b).unlike.empty()) << "both grouped";
  a.header.schema_version = "1.19";
  a.header.backend = b.header.backend = "nccl";  // device backends grouped all along
  EXPECT_TRUE(compare_results(a, b).unlike.empty());
}

// A record before 1.21 took a round trip's slower rank each iteration (up to
// 10% slower ping-pong at 8 B); one since the rank that starts it.
TEST(Compare, RoundTripsTimedOnTheSlowerRankAreNamed) {
  Results a = test::make_results({test::model_row("pingpong", "global", 2, 8, 0.44)});
  Results b = test::make_results({test::model_row("pingpong", "global", 2, 8, 0.40)});
  a.header.schema_version = "1.20";
  b.header.schema_version = "1.21";
  const Comparison c = compare_results(a, b);
  ASSERT_EQ(c.unlike.size(), 1u);
  EXPECT_NE(c.unlike[0].find("a timed round trips (pingpong) on the slower rank, b on the rank that starts "
                             "them"),
            std::string::npos)
      << c.unlike[0];
  b.header.command = "import";
  EXPECT_TRUE(compare_results(a, b).unlike.empty()) << "an imported record is not guessed at";
}

}  // namespace
}  // namespace fb::model
