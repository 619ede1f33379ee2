// Rules that compare like with like inside one run, against the median:
// per-rank outliers (uniformity across ranks) and weak links (pairs).
#include <fmt/format.h>

#include <algorithm>

#include "eval_parts.hpp"
#include "fabricbench/core/stats.hpp"

namespace fb::accept {
namespace {

struct Spread {
  const Measurement* row = nullptr;
  double median_us = 0;
  int rank = -1;
  double ratio = 0;  // the slowest rank's mean over the median
};

Spread spread_of(const Measurement& m) {
  std::vector<double> times;
  for (double t : m.rank_mean_us)
    if (t >= 0) times.push_back(t);
  Spread s{&m, median_of(times), -1, 0};
  if (times.size() < 2 || s.median_us <= 0) return {};
  for (std::size_t r = 0; r < m.rank_mean_us.size(); ++r)
    if (m.rank_mean_us[r] / s.median_us > s.ratio) {
      s.ratio = m.rank_mean_us[r] / s.median_us;
      s.rank = static_cast<int>(r);
    }
  return s;
}

std::string rank_outliers(const Results& run, const Spread& s, double k) {
  std::string out;
  int listed = 0;
  for (std::size_t r = 0; r < s.row->rank_mean_us.size(); ++r) {
    const double t = s.row->rank_mean_us[r];
    if (t <= k * s.median_us || listed++ >= 8) continue;
    out += fmt::format("{}rank {} ({}) {} = {:.2f}x", out.empty() ? "" : "; ", r, host_of(run, static_cast<int>(r)),
                       figure(t, "us"), t / s.median_us);
  }
  return out;
}

std::string link_of(const PairLine& line) {
  return fmt::format("{}-{} ({} - {}){}", line.node_a, line.node_b, line.host_a, line.host_b,
                     line.rail > 0 ? fmt::format(" rail {}", line.rail) : "");
}

}  // namespace

std::optional<double> pair_figure(const PairLine& line, PairMetric metric) {
  if (metric == PairMetric::latency) return line.latency_us;
  if (metric == PairMetric::bidir) return line.bidir_gbps;
  if (!line.unidir_ab_gbps || !line.unidir_ba_gbps) return std::nullopt;
  return std::min(*line.unidir_ab_gbps, *line.unidir_ba_gbps);
}

Verdict eval_rank_outliers(const Rule& rule, const Results& run) {
  const auto rows = select_rows(run, rule.rows);
  if (rows.empty()) return skipped(rule, why_no_rows(run, rule.rows));
  Spread worst;
  bool any_per_rank = false;
  for (const auto* m : rows) {
    any_per_rank = any_per_rank || !m->rank_mean_us.empty();
    const Spread s = spread_of(*m);
    if (s.row && (!worst.row || s.ratio > worst.ratio)) worst = s;
  }
  if (!any_per_rank)
    return skipped(rule,
                   "the record has no per-rank times (rank_mean_us): record with fabricbench check and a "
                   "uniformity rule across ranks");
  if (!worst.row) return skipped(rule, "fewer than two ranks took part in the matching rows");
  const Limit& limit = rule.limits.front();
  Verdict v = start_verdict(rule);
  v.unit = "x median";
  judge(v, Bound::max, worst.ratio, limit.value, limit.text);
  v.row = row_json(*worst.row);
  for (std::size_t r = 0; r < worst.row->rank_mean_us.size(); ++r)
    if (const double t = worst.row->rank_mean_us[r]; t > limit.value * worst.median_us)
      v.offenders.push_back({host_of(run, static_cast<int>(r)), static_cast<int>(r), "", t, "us"});
  const std::string outliers = rank_outliers(run, worst, limit.value);
  v.reason = fmt::format(
      "{}: median rank {}; {}", row_label(*worst.row), figure(worst.median_us, "us"),
      outliers.empty() ? fmt::format("slowest rank {} ({}) {:.2f}x", worst.rank, host_of(run, worst.rank), worst.ratio)
                       : "above the bound: " + outliers);
  return v;
}

Verdict eval_pairs(const Rule& rule, const Results& run) {
  const std::string key = rule.pair_metric == PairMetric::latency ? "latency_us"
                          : rule.pair_metric == PairMetric::bidir ? "bidir_gbps"
                                                                  : "unidir_ab_gbps and unidir_ba_gbps";
  std::vector<std::pair<const PairLine*, double>> links;
  bool any = false;
  for (const auto& line : run.pairs) {
    // Retests measure a suspect again against one good node: the schedule's
    // lines alone are the matrix whose median the rule compares against.
    if (line.retest) continue;
    any = true;
    if (auto v = pair_figure(line, rule.pair_metric)) links.emplace_back(&line, *v);
  }
  if (!any) return skipped(rule, "no pair lines in this run");
  if (links.size() < 2) return skipped(rule, fmt::format("fewer than two pair lines carry {}", key));
  std::vector<double> values;
  for (const auto& l : links) values.push_back(l.second);
  const double med = median_of(values);
  const Limit& limit = rule.limits.front();
  // Against the median ('0.9 of median': the odd link out) or an absolute
  // figure ('40 GB/s': also a fabric whose links are all equally slow).
  const bool relative = limit.reference == Reference::median;
  if (relative && med <= 0) return skipped(rule, fmt::format("the median {} of the pair lines is 0", key));
  const double scale = relative ? med : 1.0;
  const bool low_is_bad = limit.bound == Bound::min;
  const auto worst = std::min_element(links.begin(), links.end(), [&](const auto& x, const auto& y) {
    return low_is_bad ? x.second < y.second : x.second > y.second;
  });
  const std::string unit = rule.pair_metric == PairMetric::latency ? "us" : "GB/s";
  auto ratio = [&](double value) { return relative ? fmt::format(" = {:.2f}x", value / med) : std::string(); };
  std::string bad;
  int listed = 0;
  Verdict v = start_verdict(rule);
  for (const auto& [line, value] : links) {
    const bool beyond = low_is_bad ? value < limit.value * scale : value > limit.value * scale;
    if (beyond) {
      // Either end may be the bad one: both are listed, each with its peer.
      v.offenders.push_back({line->host_a, -1, line->host_b, value, unit});
      v.offenders.push_back({line->host_b, -1, line->host_a, value, unit});
    }
    if (beyond && listed++ < 8)
      bad += fmt::format("{}{} {}{}", bad.empty() ? "" : "; ", link_of(*line), figure(value, unit), ratio(value));
  }
  v.unit = relative ? "x median" : unit;
  judge(v, limit.bound, worst->second / scale, limit.value, limit.text);
  v.reason = fmt::format("median {} over {} links; {}", figure(med, unit), links.size(),
                         bad.empty() ? fmt::format("worst {} {}{}", link_of(*worst->first),
                                                   figure(worst->second, unit), ratio(worst->second))
                                     : fmt::format("{} links beyond the bound: {}", listed, bad));
  return v;
}

}  // namespace fb::accept
