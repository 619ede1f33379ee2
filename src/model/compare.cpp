#include "fabricbench/model/compare.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>

namespace fb::model {
namespace {

using Key = std::tuple<std::string, std::string, int, int, std::string, bool, std::uint64_t>;

Key key_of(const Measurement& m) { return {m.op, m.scope, m.nranks, m.groups, m.dtype, m.in_place, m.bytes}; }

// A row's run-to-run spread is its own [min, p99] over iterations: two rows
// differ only when these ranges do not overlap.
Difference judge(const Measurement& a, const Measurement& b) {
  // One timed iteration (what an imported nccl-tests row holds) has no spread to judge by.
  if (a.time.iterations == 1 || b.time.iterations == 1) return Difference::no_spread;
  if (b.time.min_us > a.time.p99_us) return Difference::slower;
  if (b.time.p99_us < a.time.min_us) return Difference::faster;
  return Difference::same;
}

CompareRow row_of(const Measurement& m) {
  CompareRow r;
  r.op = m.op;
  r.scope = m.scope;
  r.dtype = m.dtype;
  r.nranks = m.nranks;
  r.groups = m.groups;
  r.in_place = m.in_place;
  r.bytes = m.bytes;
  return r;
}

// What the headers say that moves a row's time whatever the fabric, as notes.
std::string unlike_note(const SetupDifference& d) {
  switch (d.setting) {
    case SetupSetting::mpi_library:
      return fmt::format("a ran {}, b {}: the library's own algorithms are in every MPI row", d.a, d.b);
    case SetupSetting::mpi_thread_level:
      return fmt::format(
          "a ran MPI at {}, b at {}: with Open MPI that alone moves messages up to 16 KiB by "
          "up to 0.5 us (its locks; docs/figures.md); run both at MPI_THREAD_SINGLE (this version's "
          "default; FABRICBENCH_WATCHDOG=thread or an older version runs FUNNELED) to compare the fabric",
          d.a, d.b);
    case SetupSetting::host_timing:
      return fmt::format(
          "a timed MPI iterations under 50 us {}, b {} (records before 1.20 timed them one by one): ranks out "
          "of step made single iterations up to 1.8x slower at 8-16 B, so small-message rows moved by the "
          "timing alone (docs/run.md, When a size stops)",
          d.a, d.b);
    case SetupSetting::round_trip_timing:
      return fmt::format(
          "a timed round trips (pingpong) {}, b {} (records before 1.21 took the slower rank): the "
          "slower of two ranks each iteration read ping-pong up to 10% slower at 8 B on 2 local ranks "
          "(docs/figures.md)",
          d.a, d.b);
  }
  return {};
}

std::vector<std::string> unlike_setups(const RunHeader& a, const RunHeader& b) {
  std::vector<std::string> out;
  for (const auto& d : setup_differences(a, b)) out.push_back(unlike_note(d));
  return out;
}

}  // namespace

std::string_view name(Difference d) {
  switch (d) {
    case Difference::slower: return "slower";
    case Difference::faster: return "faster";
    case Difference::only_a: return "only in a";
    case Difference::only_b: return "only in b";
    case Difference::no_spread: return "no spread";
    case Difference::same: return "same";
  }
  return "same";
}

Comparison compare_results(const Results& a, const Results& b) {
  std::map<Key, const Measurement*> in_b;
  for (const auto& m : b.measurements) in_b.emplace(key_of(m), &m);  // first row of a key wins
  std::map<Key, bool> matched;
  Comparison out;
  out.unlike = unlike_setups(a.header, b.header);
  for (const auto& ma : a.measurements) {
    const Key key = key_of(ma);
    if (matched.contains(key)) continue;
    matched[key] = true;
    CompareRow r = row_of(ma);
    r.a = ma;
    const auto it = in_b.find(key);
    if (it == in_b.end()) {
      r.diff = Difference::only_a;
      ++out.only_a;
    } else {
      r.b = *it->second;
      r.ratio = ma.time.median_us > 0 ? r.b.time.median_us / ma.time.median_us : 0.0;
      r.diff = judge(ma, r.b);
      out.slower += r.diff == Difference::slower;
      out.faster += r.diff == Difference::faster;
      out.no_spread += r.diff == Difference::no_spread;
    }
    out.rows.push_back(std::move(r));
  }
  for (const auto& mb : b.measurements) {
    const Key key = key_of(mb);
    if (matched.contains(key)) continue;
    matched[key] = true;
    CompareRow r = row_of(mb);
    r.b = mb;
    r.diff = Difference::only_b;
    ++out.only_b;
    out.rows.push_back(std::move(r));
  }
  return out;
}

}  // namespace fb::model
