// Rules that judge measurement rows: absolute, latency, spec, baseline
// (a figure against a bound), stability (spread of iteration times) and
// correctness (wrong elements). When several rows match (placements,
// datatypes, peer pairs, repeated sweeps) the worst one decides.
#include <fmt/format.h>

#include <tuple>

#include "eval_parts.hpp"
#include "fabricbench/core/sizes.hpp"

namespace fb::accept {
namespace {

// What a limit is measured against: 1 (absolute), the spec peak, or each
// row's partner in the baseline.
struct Against {
  double spec_gbps = 0;  // spec rules: the peak
  std::string spec_basis;
  const Results* baseline = nullptr;  // baseline rules
};

using RowKey = std::tuple<std::string, std::string, std::uint64_t, bool, std::string, int, int, int>;
RowKey key_of(const Measurement& m) {
  return {m.op, m.scope, m.bytes, m.in_place, m.dtype, m.peer_a, m.peer_b, m.nranks};
}

const Measurement* partner(const Results& baseline, const Measurement& row) {
  for (const auto& m : baseline.measurements)
    if (key_of(m) == key_of(row)) return &m;
  return nullptr;
}

// The row that comes closest to (or furthest past) the bound, with its bound.
struct Judged {
  const Measurement* row = nullptr;
  double measured = 0;
  double reference = 0;  // spec peak or the baseline's figure; 0 for absolute bounds
  double bound = 0;
  double score = 0;  // measured / bound, oriented so that lower is worse
};

std::string bound_text(const Limit& limit, const Judged& j, const Against& against, const std::string& unit) {
  switch (limit.reference) {
    case Reference::spec:
      return fmt::format("{} {} ({}) = {}", limit.text, figure(j.reference, unit), against.spec_basis,
                         figure(j.bound, unit));
    case Reference::baseline:
      return fmt::format("{} {} = {}", limit.text, figure(j.reference, unit), figure(j.bound, unit));
    case Reference::none:
    case Reference::median:
      return limit.text;
  }
  return limit.text;
}

Verdict judge_limit(const Rule& rule, const Limit& limit, const std::vector<const Measurement*>& rows,
                    const Against& against) {
  Judged worst;
  for (const auto* m : rows) {
    Judged j{m, metric_value(*m, rule.metric), 0, limit.value, 0};
    if (limit.reference == Reference::spec) j.reference = against.spec_gbps;
    if (limit.reference == Reference::baseline) {
      const Measurement* base = partner(*against.baseline, *m);
      if (!base) continue;
      j.reference = metric_value(*base, rule.metric);
    }
    if (limit.reference != Reference::none) j.bound = limit.value * j.reference;
    const double ratio = j.bound > 0 ? j.measured / j.bound : j.measured;
    j.score = limit.bound == Bound::min ? ratio : -ratio;
    if (!worst.row || j.score < worst.score) worst = j;
  }
  if (!worst.row)
    return skipped(rule, fmt::format("the baseline '{}' has no row for {} (it was measured with other sizes, "
                                     "placements or datatypes)",
                                     against.baseline->path, row_label(*rows.front())));
  Verdict v = start_verdict(rule);
  v.unit = std::string(unit_of(rule.metric));
  judge(v, limit.bound, worst.measured, worst.bound, bound_text(limit, worst, against, v.unit));
  v.row = row_json(*worst.row);
  v.reason = fmt::format("{}: {} {}{}", row_label(*worst.row), name(rule.metric), figure(worst.measured, v.unit),
                         rows.size() > 1 ? fmt::format(" (worst of {} rows)", rows.size()) : "");
  return v;
}

// Of several limits (min and max), the failing one decides, else the closest.
Verdict decide(std::vector<Verdict> verdicts) {
  Verdict* pick = &verdicts.front();
  for (auto& v : verdicts) {
    if (v.status == Status::fail && pick->status != Status::fail) pick = &v;
    if (v.status == pick->status && v.margin && pick->margin && *v.margin < *pick->margin) pick = &v;
  }
  return *pick;
}

}  // namespace

Verdict eval_row_limits(const Rule& rule, const Results& run, const Results* baseline) {
  auto rows = select_rows(run, rule.rows);
  if (rows.empty()) return skipped(rule, why_no_rows(run, rule.rows));
  Against against;
  if (rule.kind == RuleKind::spec) {
    // A collective on one rank crosses no path (busbw is 0 by definition):
    // judged against a path's peak it would fail at -100% (the one-H200 check).
    std::erase_if(rows, [](const Measurement* m) { return m->nranks < 2; });
    if (rows.empty())
      return unjudged(rule, fmt::format("every matching row ran on one rank: {} there moves no data between ranks, so "
                                        "no path's peak can judge it; run it on 2 or more ranks (GPUs)",
                                        rule.rows.op.empty() ? "an op" : rule.rows.op));

    std::vector<std::string> paths;
    for (const Measurement* m : rows) paths.push_back(m->path);
    const SpecPeak peak = spec_peak(run, rule.rows.scope, paths);
    if (!peak.known) return skipped(rule, peak.reason);
    against.spec_gbps = peak.gbps;
    against.spec_basis = peak.basis.empty() ? "from the inventory" : peak.basis;
  }
  if (rule.kind == RuleKind::baseline) {
    if (!baseline) return unjudged(rule, "a baseline rule needs --baseline FILE (a record saved with --save-baseline)");
    if (auto why = baseline_mismatch(run, *baseline); !why.empty()) return unjudged(rule, why);
    against.baseline = baseline;
  }
  std::vector<Verdict> verdicts;
  for (const auto& limit : rule.limits) verdicts.push_back(judge_limit(rule, limit, rows, against));
  return decide(std::move(verdicts));
}

Verdict eval_stability(const Rule& rule, const Results& run) {
  auto rows = select_rows(run, rule.rows);
  if (rows.empty()) return skipped(rule, why_no_rows(run, rule.rows));
  std::erase_if(rows, [](const Measurement* m) { return m->time.iterations < 2 || m->time.mean_us <= 0; });
  if (rows.empty()) return skipped(rule, "every matching row has one timed iteration: no spread to judge (iters >= 2)");
  const Measurement* worst = rows.front();
  for (const auto* m : rows)
    if (m->time.cv() > worst->time.cv()) worst = m;
  Verdict v = start_verdict(rule);
  v.unit = "%";
  const Limit& limit = rule.limits.front();
  judge(v, Bound::max, 100 * worst->time.cv(), 100 * limit.value, limit.text);
  v.row = row_json(*worst);
  v.reason =
      fmt::format("{}: stddev {} over mean {} in {} iterations", row_label(*worst), figure(worst->time.stddev_us, "us"),
                  figure(worst->time.mean_us, "us"), worst->time.iterations);
  return v;
}

Verdict eval_correctness(const Rule& rule, const Results& run) {
  auto rows = select_rows(run, rule.rows);
  if (rows.empty()) return skipped(rule, why_no_rows(run, rule.rows));
  const std::size_t matched = rows.size();
  std::erase_if(rows, [](const Measurement* m) { return m->wrong < 0; });
  if (rows.empty())
    return skipped(rule,
                   fmt::format("none of the {} matching rows was checked (the sweep needs check: true)", matched));
  std::int64_t wrong = 0;
  std::string where;
  int listed = 0;
  Verdict v = start_verdict(rule);
  for (const auto* m : rows) {
    if (m->wrong <= 0) continue;
    wrong += m->wrong;
    for (int r : m->wrong_ranks) v.offenders.push_back({host_of(run, r), r, "", static_cast<double>(m->wrong), kUnitWrong});
    if (listed++ >= 5) continue;
    std::string ranks;
    for (int r : m->wrong_ranks) ranks += fmt::format("{}{} ({})", ranks.empty() ? "" : ", ", r, host_of(run, r));
    where += fmt::format("{}{}: {} wrong on ranks {}", where.empty() ? "" : "; ", row_label(*m), m->wrong, ranks);
  }
  v.unit = kUnitWrong;
  judge(v, Bound::max, static_cast<double>(wrong), 0, "0");
  v.reason = wrong == 0 ? fmt::format("{} rows checked", rows.size())
                        : where + (listed > 5 ? fmt::format("; and {} more rows", listed - 5) : "");
  return v;
}

}  // namespace fb::accept
