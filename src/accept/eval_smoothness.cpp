// The `smoothness` rule: no size of a matching curve off its neighbours'
// trend, no busbw that falls as the size grows (accept/smoothness.hpp).
//   - kind: smoothness
//     op: all_reduce      # optional, as scope, placement, datatype: every curve otherwise
//     max_jump: 1.5       # time over the line through its neighbours (log-log), a factor
//     max_drop: 10%       # busbw falling from the size before
//     from: 64K           # optional: smaller sizes are not judged
#include <fmt/format.h>

#include <cstdlib>

#include "eval_parts.hpp"
#include "fabricbench/accept/smoothness.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/sizes.hpp"
#include "profile_parts.hpp"

namespace fb::accept {
namespace {

// "1.5" or "1.5x": a factor above 1.
double jump_factor(const Field& f) {
  std::string text = f.text();
  if (!text.empty() && (text.back() == 'x' || text.back() == 'X')) text.pop_back();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 1) || !(v < 1e6))
    f.fail(fmt::format("'{}': a factor above 1 such as 1.5 (the time at a size over its neighbours' trend)", f.text()));
  return v;
}

// "10%": a fraction from 0 to 100% (exclusive of 0).
double drop_fraction(const Field& f) {
  Limit l;
  try {
    l = parse_limit(f.text(), Bound::max, "");
  } catch (const UsageError& e) {
    f.fail(e.what());
  }
  if (l.dimension != Dimension::percent || !(l.value > 0) || !(l.value < 1))
    f.fail(fmt::format("'{}': a percentage above 0% and below 100% such as 10% (busbw falling from one size to the next)",
                       f.text()));
  return l.value;
}

}  // namespace

void parse_smoothness(const Field& f, Rule& r) {
  if (auto v = f.find("max_jump")) r.max_jump = jump_factor(*v);
  if (auto v = f.find("max_drop")) r.max_drop = drop_fraction(*v);
  if (auto v = f.find("from")) r.from_bytes = v->bytes();
  if (r.max_jump <= 0 && r.max_drop <= 0)
    f.fail("a smoothness rule needs max_jump (a factor such as 1.5), max_drop (a percentage such as 10%), or both");
}

Verdict eval_smoothness(const Rule& rule, const Results& run) {
  const auto rows = select_rows(run, rule.rows);
  if (rows.empty()) return skipped(rule, why_no_rows(run, rule.rows));
  const std::size_t need = rule.max_jump > 0 ? 3 : 2;
  if (curves_with_sizes(rows, need) == 0)
    return skipped(rule, fmt::format("no matching curve has {} sizes or more: a {} needs its neighbours", need,
                                     rule.max_jump > 0 ? "jump" : "drop"));
  const auto breaks = find_curve_breaks(rows, {rule.max_jump, rule.max_drop, rule.from_bytes}, run.header);
  Verdict v = start_verdict(rule);
  v.unit = kUnitBreaks;
  std::string limits;
  if (rule.max_jump > 0) limits += fmt::format("time within {:g}x of its neighbours' trend", rule.max_jump);
  if (rule.max_drop > 0)
    limits += fmt::format("{}busbw falling at most {:g}% from one size to the next", limits.empty() ? "" : ", ",
                          100 * rule.max_drop);
  judge(v, Bound::max, static_cast<double>(breaks.size()), 0, "0");
  if (breaks.empty()) {
    v.reason = fmt::format("{} curves smooth ({}{})", curves_with_sizes(rows, need), limits,
                           rule.from_bytes ? ", from " + format_bytes(rule.from_bytes) : "");
    return v;
  }
  v.row = row_json(*breaks.front().row);
  for (std::size_t i = 0; i < breaks.size() && i < 5; ++i)
    v.reason += (i ? " | " : "") + breaks[i].detail;
  if (breaks.size() > 5) v.reason += fmt::format(" | and {} more", breaks.size() - 5);
  return v;
}

}  // namespace fb::accept
