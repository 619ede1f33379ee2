#include "fabricbench/core/pair_schedule.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace fb {

std::vector<PairRound> round_robin(int nodes) {
  std::vector<PairRound> rounds;
  if (nodes < 2) return rounds;
  // With a phantom node for odd N, `m` is even; node m-1 is the fixed one
  // and the others sit on a circle of m-1 places.
  const int m = nodes + nodes % 2;
  const int circle = m - 1;
  for (int r = 0; r < circle; ++r) {
    PairRound round;
    auto meet = [&](int x, int y) {
      if (x >= nodes || y >= nodes) {
        round.bye = std::min(x, y);  // its partner is the phantom
        return;
      }
      round.pairs.push_back({std::min(x, y), std::max(x, y)});
    };
    meet(r, m - 1);
    for (int k = 1; k < m / 2; ++k) meet((r + k) % circle, (r - k + circle) % circle);
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<std::vector<PairJob>> rounds_on_rails(int nodes, int rails) {
  std::vector<std::vector<PairJob>> out;
  for (const PairRound& round : round_robin(nodes)) {
    std::vector<PairJob> jobs;
    for (int rail = 0; rail < rails; ++rail)
      for (const NodePair& p : round.pairs) jobs.push_back({rail, p});
    out.push_back(std::move(jobs));
  }
  return out;
}

std::vector<std::vector<PairJob>> pack_rounds(const std::vector<PairJob>& jobs) {
  std::vector<std::vector<PairJob>> rounds;
  std::vector<std::set<std::pair<int, int>>> busy;  // (rail, node) per round
  for (const PairJob& job : jobs) {
    const std::pair<int, int> a{job.rail, job.pair.a};
    const std::pair<int, int> b{job.rail, job.pair.b};
    std::size_t r = 0;
    while (r < rounds.size() && (busy[r].count(a) || busy[r].count(b))) ++r;
    if (r == rounds.size()) {
      rounds.emplace_back();
      busy.emplace_back();
    }
    rounds[r].push_back(job);
    busy[r].insert(a);
    busy[r].insert(b);
  }
  return rounds;
}

}  // namespace fb
