// The `bimodal` rule: no row's iteration times fell into two separate modes
// (measurement `modes`, core/modes.hpp): a flapping link, a path that
// alternates, an ECMP hash collision. The row's median averages such a link
// into a figure no iteration had, so a bandwidth rule alone may pass it.
//   - kind: bimodal
//     scope: inter          # optional, as op, size, placement, datatype: every row otherwise
// A `pairs` record's links are judged the same way (pair `modes`) when the
// rule names no op or scope.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "eval_parts.hpp"
#include "fabricbench/core/modes.hpp"

namespace fb::accept {

namespace {

Verdict judge_links(const Rule& rule, const std::vector<const PairLine*>& links,
                    const std::vector<const PairLine*>& bad) {
  Verdict v = start_verdict(rule);
  v.unit = kUnitBimodalRows;
  judge(v, Bound::max, static_cast<double>(bad.size()), 0, "0");
  if (bad.empty()) {
    v.reason = fmt::format("none of the {} links judged has its iteration times in two modes", links.size());
    return v;
  }
  std::vector<std::string> parts;
  for (const auto* p : bad) {
    parts.push_back(fmt::format("link {} - {} {}: {}", p->host_a, p->host_b, p->modes->op, modes_text(*p->modes)));
    v.offenders.push_back({p->host_a, -1, p->host_b, p->modes->high_us, "us"});
  }
  v.reason = fmt::format("{} of {} links have their iteration times in two modes, a link or path that alternates: {}",
                         bad.size(), links.size(), fmt::join(parts, "; "));
  return v;
}

}  // namespace

Verdict eval_bimodal(const Rule& rule, const Results& run) {
  std::vector<const Measurement*> judged, bad;
  for (const auto* m : select_rows(run, rule.rows)) {
    const std::size_t timings = m->time.samples > 0 ? m->time.samples : m->time.iterations;
    if (timings < kModesMinIterations) continue;  // too few to tell two modes from noise
    judged.push_back(m);
    if (m->modes) bad.push_back(m);
  }
  std::vector<const PairLine*> links, bad_links;
  if (rule.rows.op.empty() && rule.rows.scope.empty())
    for (const auto& p : run.pairs) {
      if (p.iterations < kModesMinIterations) continue;
      links.push_back(&p);
      if (p.modes) bad_links.push_back(&p);
    }
  if (!links.empty()) return judge_links(rule, links, bad_links);
  if (judged.empty())
    return skipped(rule, fmt::format("no selected row has {} or more timed iterations, the fewest in which two modes "
                                     "can be told from noise (run -n {} or more)",
                                     kModesMinIterations, kModesMinIterations));
  Verdict v = start_verdict(rule);
  v.unit = kUnitBimodalRows;
  judge(v, Bound::max, static_cast<double>(bad.size()), 0, "0");
  if (bad.empty()) {
    v.reason = fmt::format("none of the {} rows judged has its iteration times in two modes", judged.size());
    return v;
  }
  std::vector<std::string> parts;
  for (const auto* m : bad) {
    parts.push_back(fmt::format("{}: {}", row_label(*m), modes_text(*m->modes)));
    if (m->slowest_rank >= 0)
      v.offenders.push_back({host_of(run, m->slowest_rank), m->slowest_rank, "", m->modes->high_us, "us"});
  }
  v.row = row_json(*bad.front());
  v.reason = fmt::format("{} of {} rows have their iteration times in two modes, a link or path that alternates: {}",
                         bad.size(), judged.size(), fmt::join(parts, "; "));
  return v;
}

}  // namespace fb::accept
