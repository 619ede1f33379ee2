// Whether a saved baseline can be compared with this run at all. Comparing a
// 16-rank baseline with an 8-rank run, or one with other ops, would give
// ratios that mean nothing: refuse and say what differs.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "eval_parts.hpp"

namespace fb::accept {
namespace {

std::string header_int(const Results& r, const char* key) {
  const int n = std::string_view(key) == "ranks" ? r.header.ranks : r.header.nodes;
  return n >= 0 ? std::to_string(n) : std::string("?");
}

std::set<std::string> measured(const Results& r, bool scopes) {
  std::set<std::string> out;
  for (const auto& m : r.measurements) out.insert(scopes ? m.scope : m.op);
  return out;
}

std::string listed(const std::set<std::string>& items) {
  return items.empty() ? "none" : fmt::format("{}", fmt::join(items, ", "));
}

}  // namespace

std::string baseline_mismatch(const Results& run, const Results& baseline) {
  std::vector<std::string> differ;
  for (const char* key : {"ranks", "nodes"}) {
    const std::string a = header_int(run, key);
    const std::string b = header_int(baseline, key);
    if (a != b) differ.push_back(fmt::format("{} {} in the baseline, {} in this run", key, b, a));
  }
  // The same fabric measures up to 0.5 us apart at small sizes between these
  // (Open MPI's locks above MPI_THREAD_SINGLE: docs/figures.md).
  const auto level = mpi_thread_level_of(run.header), base_level = mpi_thread_level_of(baseline.header);
  if (level && base_level && *level != *base_level)
    differ.push_back(
        fmt::format("MPI ran at {} in the baseline, {} in this run (give both the same --timeout: 0 runs "
                    "at MPI_THREAD_SINGLE)",
                    *base_level, *level));
  // Single iterations against group means (schema 1.20): small rows' medians
  // and tails move by the timing alone.
  const auto grouped = host_timing_in_groups_of(run.header), base_grouped = host_timing_in_groups_of(baseline.header);
  if (grouped && base_grouped && *grouped != *base_grouped)
    differ.push_back(
        fmt::format("the baseline timed iterations under 50 us {}, this run {} (schema 1.20 and later "
                    "time them in groups)",
                    *base_grouped ? "in groups" : "one by one", *grouped ? "in groups" : "one by one"));
  for (bool scopes : {false, true}) {
    const auto a = measured(run, scopes);
    const auto b = measured(baseline, scopes);
    if (a != b)
      differ.push_back(
          fmt::format("{} measured: {} in the baseline, {} in this run", scopes ? "scopes" : "ops", listed(b), listed(a)));
  }
  if (differ.empty()) return {};
  std::string text = fmt::format("the baseline '{}' does not match this run: ", baseline.path);
  for (std::size_t i = 0; i < differ.size(); ++i) text += (i ? "; " : "") + differ[i];
  return text + ". Save a baseline from a run of this profile on this layout (--save-baseline FILE)";
}

}  // namespace fb::accept
