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

TEST(CpuSlot, ARankNearAGpuTakesACpuNextToIt) {
  // Issue 34, defect 5: slots were taken from CPU 0 up whatever the GPU, so
  // the rank of a GPU on the second socket was timed on the first.
  std::vector<int> both(32);
  for (int c = 0; c < 32; ++c) both[static_cast<std::size_t>(c)] = c;
  const std::vector<int> second = parse_cpu_list("16-31");
  EXPECT_EQ(cpu_for_slot(both, CpuSlot{0, 2, second}), 16);
  EXPECT_EQ(cpu_for_slot(both, CpuSlot{1, 2, second}), 17);
  EXPECT_EQ(cpu_for_slot(both, CpuSlot{0, 1, second}), 16);  // alone near its GPU: still next to it
  EXPECT_EQ(cpu_for_slot(both, CpuSlot{0, 2}), 0);           // no preference: as before
  // Near CPUs the launcher did not allow, or fewer than its ranks: left alone.
  const std::vector<int> first_only = parse_cpu_list("0-15");
  EXPECT_EQ(cpu_for_slot(first_only, CpuSlot{0, 2, second}), -1);
  EXPECT_EQ(cpu_for_slot(both, CpuSlot{0, 3, parse_cpu_list("16-17")}), -1);
}

TEST(CpuSlot, CpuListsParse) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_TRUE(parse_cpu_list("3-1").empty());
  EXPECT_TRUE(parse_cpu_list("a-b").empty());
  EXPECT_TRUE(parse_cpu_list("0-99999999").empty());
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
