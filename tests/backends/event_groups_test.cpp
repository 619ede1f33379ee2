// The GPU timer's grouping of short iterations between events (issue 3: an
// event after every 5 us NCCL call cost as much as the call).
#include "cuda_common/event_groups.hpp"

#include <gtest/gtest.h>

namespace fb::gpu {
namespace {

TEST(EventGroups, TheFirstBatchHasAnEventPerIteration) {
  EXPECT_EQ(event_group_size(0), 1u);
  EXPECT_EQ(event_group_size(-3), 1u);
}

TEST(EventGroups, ShortIterationsAreGroupedToSpanFiftyMicroseconds) {
  EXPECT_EQ(event_group_size(5.49), 10u);  // nccl-tests' one-rank 8 B all_reduce on the H200
  EXPECT_EQ(event_group_size(25), 2u);
  EXPECT_EQ(event_group_size(49.9), 2u);
  EXPECT_EQ(event_group_size(50), 1u);
  EXPECT_EQ(event_group_size(4000), 1u);
}

TEST(EventGroups, GraphFastIterationsAreCappedSoABatchKeepsItsSpread) {
  EXPECT_EQ(event_group_size(0.5), kMaxGroup);
  EXPECT_EQ(event_group_size(1e-9), kMaxGroup);
}

}  // namespace
}  // namespace fb::gpu
