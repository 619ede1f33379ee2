// Finding the measurement lines a rule is about, and saying why there are none.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "eval_parts.hpp"
#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/types.hpp"

namespace fb::accept {
namespace {

// The size the engine reports for a requested size on this row's op and ranks.
bool size_matches(const Measurement& m, std::uint64_t requested) {
  if (m.bytes == requested) return true;
  const auto op = parse_op(m.op);
  const auto dtype = parse_dtype(m.dtype);
  if (!op || !dtype || m.nranks < 1) return false;
  return layout_for(*op, *dtype, requested, m.nranks).bytes == m.bytes;
}

bool placement_matches(const Measurement& m, const RowFilter& f) { return !f.in_place || *f.in_place == m.in_place; }

std::string sizes_measured(const std::vector<const Measurement*>& rows) {
  std::set<std::uint64_t> sizes;
  for (const auto* m : rows) sizes.insert(m->bytes);
  if (sizes.size() == 1) return format_bytes(*sizes.begin());
  return fmt::format("{} sizes from {} to {}", sizes.size(), format_bytes(*sizes.begin()),
                     format_bytes(*sizes.rbegin()));
}

// The run's own word on why op/scope did not run: a skip line for the op at
// that scope, or for the whole scope ("inter: one node").
std::string run_skip_reason(const Results& results, const RowFilter& f) {
  for (const Skip& s : results.skips) {
    if ((f.scope.empty() || s.scope == f.scope) && (s.op.empty() || s.op == f.op) &&
        (s.bytes == 0 || (f.bytes && s.bytes == *f.bytes)))
      return fmt::format("the run skipped {}{}{}: {}", s.op.empty() ? "scope " : s.op, s.op.empty() ? "" : "/", s.scope,
                         s.reason);
  }
  return {};
}

}  // namespace

std::vector<const Measurement*> select_rows(const Results& results, const RowFilter& f) {
  std::vector<const Measurement*> out;
  for (const auto& m : results.measurements) {
    if (!f.op.empty() && m.op != f.op) continue;
    if (!f.scope.empty() && m.scope != f.scope) continue;
    if (!placement_matches(m, f)) continue;
    if (!f.dtype.empty() && m.dtype != f.dtype) continue;
    if (f.bytes && !size_matches(m, *f.bytes)) continue;
    out.push_back(&m);
  }
  return out;
}

std::string why_no_rows(const Results& results, const RowFilter& f) {
  // "all_reduce/global rows", "all_reduce rows", "global rows" or "rows": a
  // rule for every op once read "no any op rows".
  const std::string what = fmt::format("{}{}{}", f.op, f.op.empty() || f.scope.empty() ? "" : "/", f.scope);
  const std::string rows_of = what.empty() ? "rows" : what + " rows";
  std::vector<const Measurement*> rows;
  std::set<std::string> ops;
  std::set<std::string> scopes;
  for (const auto& m : results.measurements) {
    ops.insert(m.op);
    if (f.op.empty() || m.op == f.op) scopes.insert(m.scope);
    if ((f.op.empty() || m.op == f.op) && (f.scope.empty() || m.scope == f.scope)) rows.push_back(&m);
  }
  if (rows.empty()) {
    if (auto skip = run_skip_reason(results, f); !skip.empty()) return skip;
    if (results.measurements.empty())  // once "(scopes measured for it: )"
      return fmt::format("this run has no measurement rows at all (a `fabricbench {}` record)", results.header.command);
    if (!f.op.empty() && !ops.count(f.op))
      return fmt::format("this run measured no {} rows (ops measured: {})", f.op, fmt::join(ops, ", "));
    return fmt::format("this run measured no {} (scopes measured{}: {})", rows_of, f.op.empty() ? "" : " for it",
                       fmt::join(scopes, ", "));
  }
  std::erase_if(rows, [&](const Measurement* m) { return !placement_matches(*m, f); });
  if (rows.empty())
    return fmt::format("no {} {} in this run", *f.in_place ? "in-place" : "out-of-place", rows_of);
  std::erase_if(rows, [&](const Measurement* m) { return !f.dtype.empty() && m->dtype != f.dtype; });
  if (rows.empty()) return fmt::format("no {} with datatype {} in this run", rows_of, f.dtype);
  if (f.bytes) {
    if (auto skip = run_skip_reason(results, f); !skip.empty()) return skip;
    return fmt::format("size {} was not measured{} (measured: {})", format_bytes(*f.bytes),
                       what.empty() ? "" : " for " + what, sizes_measured(rows));
  }
  return fmt::format("no {} match", rows_of);
}

double metric_value(const Measurement& m, Metric metric) {
  switch (metric) {
    case Metric::busbw:
      return m.busbw_gbps;
    case Metric::algbw:
      return m.algbw_gbps;
    case Metric::time_us:
      return m.time.median_us;
    case Metric::time_min_us:
      return m.time.min_us;
    case Metric::time_mean_us:
      return m.time.mean_us;
    case Metric::time_p99_us:
      return m.time.p99_us;
    case Metric::time_max_us:
      return m.time.max_us;
  }
  return 0;
}

std::string row_label(const Measurement& m) {
  std::string peers = m.peer_a >= 0 ? fmt::format(" ranks {}<->{}", m.peer_a, m.peer_b) : "";
  // Sizes rounded to the rank count (1048572 B) read better exactly than as "1.02e+03 KiB".
  std::string size = format_bytes(m.bytes);
  if (size.find_first_of(".e") != std::string::npos) size = fmt::format("{} B", m.bytes);
  return fmt::format("{}/{} {} {}{}", m.op, m.scope, size, m.in_place ? "in-place" : "out-of-place", peers);
}

CheckRow row_json(const Measurement& m) {
  CheckRow row{m.op, m.scope, m.bytes, m.in_place, m.dtype, m.path, m.nranks, std::nullopt};
  if (m.peer_a >= 0) row.peers = std::pair{m.peer_a, m.peer_b};
  return row;
}

std::string host_of(const Results& results, int rank) {
  const auto& h = results.header;
  if (rank < 0 || static_cast<std::size_t>(rank) >= h.rank_node.size()) return {};
  const int n = h.rank_node[static_cast<std::size_t>(rank)];
  if (n < 0 || static_cast<std::size_t>(n) >= h.hosts.size()) return {};
  return h.hosts[static_cast<std::size_t>(n)];
}

}  // namespace fb::accept
