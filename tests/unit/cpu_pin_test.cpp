#include "fabricbench/core/cpu_pin.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <string>
#include <vector>

namespace fb {
namespace {

TEST(CpuSlot, CountsTheRanksOfTheSameMachine) {
  // Ranks 0, 2, 3 on machine a (emulated nodes with their own host names
  // share it), rank 1 on b.
  const std::vector<std::string> ids{"a", "b", "a", "a"};
  EXPECT_EQ(cpu_slot_of(ids, 0).index, 0);
  EXPECT_EQ(cpu_slot_of(ids, 0).count, 3);
  EXPECT_EQ(cpu_slot_of(ids, 2).index, 1);
  EXPECT_EQ(cpu_slot_of(ids, 3).index, 2);
  EXPECT_EQ(cpu_slot_of(ids, 1).index, 0);
  EXPECT_EQ(cpu_slot_of(ids, 1).count, 1);
  EXPECT_EQ(cpu_slot_of(ids, 4).count, 0);  // not a rank: unknown
}

TEST(CpuSlot, DistinctCpusOnlyWhereEveryRankFits) {
  const std::vector<int> two{0, 1};
  EXPECT_EQ(cpu_for_slot(two, {0, 2}), 0);
  EXPECT_EQ(cpu_for_slot(two, {1, 2}), 1);
  EXPECT_EQ(cpu_for_slot(two, {2, 4}), -1);  // four ranks on two CPUs: oversubscribed, leave them
  const std::vector<int> spread{2, 5, 7};     // a cpuset: the slot's position, not its number
  EXPECT_EQ(cpu_for_slot(spread, {1, 3}), 5);
  const std::vector<int> bound{3};            // the launcher bound it to one CPU
  EXPECT_EQ(cpu_for_slot(bound, {0, 2}), -1);
  EXPECT_EQ(cpu_for_slot(two, {0, 1}), -1);   // alone on its machine
  EXPECT_EQ(cpu_for_slot(two, {0, 0}), -1);   // unknown
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

TEST(PinnedCpu, HoldsTheThreadOnItsCpuAndGivesTheSetBack) {
  const std::vector<int> before = allowed_cpus();
  if (before.size() < 2) GTEST_SKIP() << "this process may run on " << before.size() << " CPU only";
  {
    const PinnedCpu pin({1, 2});
    EXPECT_EQ(pin.cpu(), before[1]);
    EXPECT_EQ(allowed_cpus(), std::vector<int>{before[1]});
  }
  EXPECT_EQ(allowed_cpus(), before);
  const PinnedCpu crowded({0, static_cast<int>(before.size()) + 1});  // more ranks than CPUs
  EXPECT_EQ(crowded.cpu(), -1);
  EXPECT_EQ(allowed_cpus(), before);
}

}  // namespace
}  // namespace fb
