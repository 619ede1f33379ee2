#include "wrong_counts.hpp"

#include <algorithm>

namespace fb {

std::vector<std::int64_t> wrong_by_rank(const Comm& world, std::int64_t mine) {
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(world.size()), 0);
  per_rank[static_cast<std::size_t>(world.rank())] = mine;
  world.allreduce_sum_quiet(per_rank);
  return per_rank;
}

std::vector<WrongAt> gather_wrong_at(const Comm& world, const std::vector<std::int64_t>& per_iteration) {
  // (iteration, elements) pairs of this rank's bad iterations; no rank sends
  // more than the cap, so rank 0's buffer stays bounded on broken hardware.
  std::vector<std::int64_t> mine;
  for (std::size_t i = 0; i < per_iteration.size() && mine.size() < 2 * kMaxWrongAt; ++i)
    if (per_iteration[i] > 0) {
      mine.push_back(static_cast<std::int64_t>(i) + 1);
      mine.push_back(per_iteration[i]);
    }
  const auto all = world.gather_blocks_quiet<std::int64_t>(mine, 0);  // empty off rank 0
  std::vector<WrongAt> out;
  for (std::size_t r = 0; r < all.size(); ++r)
    for (std::size_t k = 0; k + 1 < all[r].size() && out.size() < kMaxWrongAt; k += 2)
      out.push_back({static_cast<int>(r), all[r][k], all[r][k + 1]});
  return out;
}

}  // namespace fb
