// Whether a saved baseline can be compared with this run at all. Comparing a
// 16-rank baseline with an 8-rank run, or one with other ops, would give
// ratios that mean nothing: refuse and say what differs.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "eval_parts.hpp"
#include "fabricbench/core/op_desc.hpp"

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

bool measured_a_round_trip(const Results& r) {
  return std::ranges::any_of(r.measurements, [](const Measurement& m) {
    const auto op = parse_op(m.op);
    return op && op_desc(*op).round_trip;
  });
}

// Why a baseline whose setup differs from the run's cannot judge it ("" for
// a difference a baseline is there to catch). `d.a` is the run, `d.b` the
// baseline; `run` the run's record.
std::string refusal(const SetupDifference& d, const Results& run) {
  switch (d.setting) {
    case SetupSetting::mpi_library:
      return {};  // an MPI upgrade that slows the fabric's rows is a regression the baseline should catch
    case SetupSetting::mpi_thread_level:
      // The same fabric measures up to 0.5 us apart at small sizes between
      // these (Open MPI's locks above MPI_THREAD_SINGLE: docs/figures.md).
      return fmt::format(
          "MPI ran at {} in the baseline, {} in this run (save the baseline again with this version, "
          "which runs at MPI_THREAD_SINGLE unless FABRICBENCH_WATCHDOG=thread)",
          d.b, d.a);
    case SetupSetting::host_timing:
      // Single iterations against group means: small rows' medians and tails
      // move by the timing alone.
      return fmt::format(
          "the baseline timed iterations under 50 us {}, this run {} (schema 1.20 and later time them in groups)", d.b,
          d.a);
    case SetupSetting::round_trip_timing:
      // Only the round trips' rows moved (the ops measured match, or the run is refused for that).
      if (!measured_a_round_trip(run)) return {};
      return fmt::format(
          "the baseline timed round trips (pingpong) {}, this run {} (schema 1.21 and later time them on "
          "the rank that starts them)",
          d.b, d.a);
  }
  return {};
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
  for (const auto& d : setup_differences(run.header, baseline.header))
    if (auto why = refusal(d, run); !why.empty()) differ.push_back(std::move(why));
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
