// How many back-to-back iterations one timing spans (timing_groups.hpp): the
// GPU timer's events (issue 3: an event after every 5 us NCCL call cost as
// much as the call) and the host's wall clock (ranks not in step).
#include "fabricbench/core/timing_groups.hpp"

#include <gtest/gtest.h>

namespace fb {
namespace {

TEST(TimingGroups, TheFirstBatchTimesEachIterationAlone) {
  EXPECT_EQ(timing_group_size(0, kMaxEventGroup), 1u);
  EXPECT_EQ(timing_group_size(-3, kMaxHostGroup), 1u);
}

TEST(TimingGroups, ShortIterationsAreGroupedToSpanFiftyMicroseconds) {
  EXPECT_EQ(timing_group_size(5.49, kMaxEventGroup), 10u);  // nccl-tests' one-rank 8 B all_reduce on the H200
  EXPECT_EQ(timing_group_size(25, kMaxEventGroup), 2u);
  EXPECT_EQ(timing_group_size(49.9, kMaxEventGroup), 2u);
  EXPECT_EQ(timing_group_size(50, kMaxEventGroup), 1u);
  EXPECT_EQ(timing_group_size(4000, kMaxEventGroup), 1u);
}

TEST(TimingGroups, FastIterationsAreCappedSoABatchKeepsItsSpread) {
  EXPECT_EQ(timing_group_size(0.5, kMaxEventGroup), kMaxEventGroup);  // a graph-replayed small NCCL call
  EXPECT_EQ(timing_group_size(1e-9, kMaxEventGroup), kMaxEventGroup);
  EXPECT_EQ(timing_group_size(0.45, kMaxHostGroup), kMaxHostGroup);  // an 8 B all_gather on 2 local ranks
  EXPECT_EQ(timing_group_size(5.49, kMaxHostGroup), 10u);            // the span rule below the cap
  EXPECT_EQ(timing_group_size(1, 0), 1u);                            // a cap of 0 is one
}

}  // namespace
}  // namespace fb
