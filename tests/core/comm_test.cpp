// Comm under mpirun with 1 to 4 ranks: the variable-length gather (empty
// blocks, uneven lengths, any root), the fixed-size gathers, and what
// check_mpi says about a failed call.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

// Rank r's block: (r * 5) % 7 bytes (rank 0 sends none), each naming its rank and position.
std::string block_of(int r) {
  std::string s;
  for (int k = 0; k < (r * 5) % 7; ++k) s.push_back(static_cast<char>('a' + (r * 7 + k) % 26));
  return s;
}

TEST(CommGather, UnevenBlocksArriveWholeAndInRankOrderAtEveryRoot) {
  const Comm world = Comm::world();
  for (int root = 0; root < world.size(); ++root) {
    const auto all = world.gather_strings_quiet(block_of(world.rank()), root);
    if (world.rank() != root) {
      EXPECT_TRUE(all.empty()) << "root " << root;
      continue;
    }
    ASSERT_EQ(all.size(), static_cast<std::size_t>(world.size()));
    for (int r = 0; r < world.size(); ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], block_of(r)) << "rank " << r;
    EXPECT_TRUE(all[0].empty());  // the 0-length block is there, as an empty string
  }
}

TEST(CommGather, EveryBlockEmpty) {
  const Comm world = Comm::world();
  const auto all = world.gather_strings_quiet("", 0);
  if (world.rank() != 0) return;
  ASSERT_EQ(all.size(), static_cast<std::size_t>(world.size()));
  for (const auto& b : all) EXPECT_TRUE(b.empty());
}

TEST(CommGather, OneLargeBlockAmongSmallOnes) {
  const Comm world = Comm::world();
  const int big = world.size() - 1;
  const std::string mine = world.rank() == big ? std::string(3 << 20, 'z') : std::string(1, char('0' + world.rank()));
  const auto all = world.gather_strings_quiet(mine, 0);
  if (world.rank() != 0) return;
  ASSERT_EQ(all.size(), static_cast<std::size_t>(world.size()));
  EXPECT_EQ(all[static_cast<std::size_t>(big)], std::string(3 << 20, 'z'));
  for (int r = 0; r < big; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], std::string(1, char('0' + r)));
}

TEST(CommGather, BlocksOfValuesKeepTheirValues) {
  const Comm world = Comm::world();
  std::vector<std::int64_t> mine;  // rank r: r values, r * 1000 + k, the last negative
  for (int k = 0; k < world.rank(); ++k) mine.push_back(world.rank() * 1000 + k);
  if (!mine.empty()) mine.back() = -mine.back();
  const auto all = world.gather_blocks_quiet<std::int64_t>(mine, 0);
  if (world.rank() != 0) {
    EXPECT_TRUE(all.empty());
    return;
  }
  ASSERT_EQ(all.size(), static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r) {
    const auto& b = all[static_cast<std::size_t>(r)];
    ASSERT_EQ(b.size(), static_cast<std::size_t>(r));
    for (int k = 0; k < r; ++k) EXPECT_EQ(b[static_cast<std::size_t>(k)], (k == r - 1 ? -1 : 1) * (r * 1000 + k));
  }
}

TEST(CommGather, FixedSizeGathers) {
  const Comm world = Comm::world();
  const double mine[2] = {world.rank() + 0.5, -world.rank() * 2.0};
  const auto doubles = world.gather_quiet(mine, 0);
  const auto ints = world.allgather_quiet(world.rank() * 10 + 3);
  ASSERT_EQ(ints.size(), static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(ints[static_cast<std::size_t>(r)], r * 10 + 3);
  if (world.rank() != 0) {
    EXPECT_TRUE(doubles.empty());
    return;
  }
  ASSERT_EQ(doubles.size(), 2 * static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r) {
    EXPECT_EQ(doubles[2 * static_cast<std::size_t>(r)], r + 0.5);
    EXPECT_EQ(doubles[2 * static_cast<std::size_t>(r) + 1], -r * 2.0);
  }
}

TEST(CommGather, AllgatherOfUnevenStrings) {
  const Comm world = Comm::world();
  const auto all = world.allgather_strings(block_of(world.rank()));
  ASSERT_EQ(all.size(), static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], block_of(r));
}

TEST(CommCheck, SuccessPasses) { EXPECT_NO_THROW(check_mpi(MPI_SUCCESS, "MPI_Barrier")); }

TEST(CommCheck, AFailureNamesTheCallMpisTextTheRankAndTheHost) {
  const Comm world = Comm::world();
  try {
    check_mpi(MPI_ERR_TRUNCATE, "MPI_Igatherv");
    ADD_FAILURE() << "no throw";
  } catch (const RunError& e) {
    const std::string text = e.what();
    const std::string where = "MPI_Igatherv failed on rank " + std::to_string(world.rank()) + " (host " + host_name() + "): ";
    EXPECT_EQ(text.rfind(where, 0), 0u) << text;
    EXPECT_NE(text.find("MPI_ERR_TRUNCATE"), std::string::npos) << "MPI's text for the code: " << text;
  }
}

TEST(CommCheck, WithAGroupItsRankInTheGroupToo) {
  const Comm world = Comm::world();
  const Comm reversed = world.split(0, world.size() - world.rank());  // rank r is size-1-r here
  try {
    check_mpi(MPI_ERR_OTHER, "MPI_Allreduce", reversed.native());
    ADD_FAILURE() << "no throw";
  } catch (const RunError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find(", rank " + std::to_string(world.size() - 1 - world.rank()) + " of the group): "),
              std::string::npos)
        << text;
  }
}

}  // namespace
}  // namespace fb
