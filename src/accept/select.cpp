// Finding the measurement lines a rule is about, and saying why there are none.
#include <fmt/format.h>

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

std::string join(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

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
  for (const auto& line : results.lines) {
    if (line.value("type", "") != "skip") continue;
    const std::string op = line.value("op", "");
    const std::string scope = line.value("scope", "");
    if ((f.scope.empty() || scope == f.scope) && (op.empty() || op == f.op) &&
        (line.value("bytes", std::uint64_t{0}) == 0 || (f.bytes && line.value("bytes", std::uint64_t{0}) == *f.bytes)))
      return fmt::format("the run skipped {}{}{}: {}", op.empty() ? "scope " : op, op.empty() ? "" : "/", scope,
                         line.value("reason", std::string("no reason given")));
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
  const std::string what = fmt::format("{}{}{}", f.op.empty() ? "any op" : f.op, f.scope.empty() ? "" : "/", f.scope);
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
    if (!f.op.empty() && !ops.count(f.op))
      return fmt::format("this run measured no {} rows (ops measured: {})", f.op, ops.empty() ? "none" : join(ops));
    return fmt::format("this run measured no {} rows (scopes measured for it: {})", what, join(scopes));
  }
  std::erase_if(rows, [&](const Measurement* m) { return !placement_matches(*m, f); });
  if (rows.empty()) return fmt::format("no {} {} rows in this run", what, *f.in_place ? "in-place" : "out-of-place");
  std::erase_if(rows, [&](const Measurement* m) { return !f.dtype.empty() && m->dtype != f.dtype; });
  if (rows.empty()) return fmt::format("no {} rows with datatype {} in this run", what, f.dtype);
  if (f.bytes) {
    if (auto skip = run_skip_reason(results, f); !skip.empty()) return skip;
    return fmt::format("size {} was not measured for {} (measured: {})", format_bytes(*f.bytes), what,
                       sizes_measured(rows));
  }
  return fmt::format("no {} rows match", what);
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

nlohmann::ordered_json row_json(const Measurement& m) {
  nlohmann::ordered_json j = {{"op", m.op},       {"scope", m.scope}, {"bytes", m.bytes},  {"in_place", m.in_place},
                              {"dtype", m.dtype}, {"path", m.path},   {"nranks", m.nranks}};
  if (m.peer_a >= 0) j["peers"] = {m.peer_a, m.peer_b};
  return j;
}

std::string host_of(const Results& results, int rank) {
  const auto& run = results.run();
  const auto nodes = run.find("rank_node");
  const auto hosts = run.find("hosts");
  if (rank < 0 || nodes == run.end() || hosts == run.end() || !nodes->is_array() || !hosts->is_array()) return {};
  if (static_cast<std::size_t>(rank) >= nodes->size()) return {};
  const auto& node = (*nodes)[static_cast<std::size_t>(rank)];
  if (!node.is_number_integer()) return {};
  const auto n = node.get<std::int64_t>();
  if (n < 0 || static_cast<std::size_t>(n) >= hosts->size() || !(*hosts)[static_cast<std::size_t>(n)].is_string())
    return {};
  return (*hosts)[static_cast<std::size_t>(n)].get<std::string>();
}

}  // namespace fb::accept
