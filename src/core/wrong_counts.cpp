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
  const int n = static_cast<int>(mine.size());
  const auto size = static_cast<std::size_t>(world.size());
  std::vector<int> counts(size);
  MPI_Request req;
  MPI_Igather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world.native(), &req);
  wait_quiet(req);
  std::vector<int> displs(size, 0);
  for (std::size_t r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<std::int64_t> all(world.rank() == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
  MPI_Igatherv(mine.data(), n, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T, 0, world.native(),
               &req);
  wait_quiet(req);
  std::vector<WrongAt> out;
  for (std::size_t r = 0; r < size && world.rank() == 0; ++r)
    for (int k = 0; k + 1 < counts[r] && out.size() < kMaxWrongAt; k += 2) {
      const auto at = static_cast<std::size_t>(displs[r] + k);
      out.push_back({static_cast<int>(r), all[at], all[at + 1]});
    }
  return out;
}

}  // namespace fb
