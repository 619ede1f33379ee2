// Gathering the check's verdicts of every rank (engine-internal).
#pragma once

#include <cstdint>
#include <vector>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/record.hpp"

namespace fb {

// What the check of one row found, on every rank (`at` on rank 0 only).
struct CheckVerdict {
  std::int64_t wrong = 0;
  std::vector<int> ranks;
  std::vector<WrongAt> at;
};

// Collective: every rank's wrong-element count, indexed by world rank, on every rank.
std::vector<std::int64_t> wrong_by_rank(const Comm& world, std::int64_t mine);

// Collective: the iterations in which some rank saw wrong elements, on rank 0
// (empty elsewhere), in rank then iteration order, at most kMaxWrongAt.
// `per_iteration` is this rank's count for each timed iteration.
std::vector<WrongAt> gather_wrong_at(const Comm& world, const std::vector<std::int64_t>& per_iteration);

}  // namespace fb
