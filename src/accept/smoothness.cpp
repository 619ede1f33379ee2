// Breaks in a sweep's curves (accept/smoothness.hpp).
#include "fabricbench/accept/smoothness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "fabricbench/core/sizes.hpp"

namespace fb::accept {
namespace {

using CurveKey = std::tuple<std::string, std::string, std::string, std::string, std::string, bool, int, int, int, int,
                            int, std::string, int>;

CurveKey curve_key_of(const Measurement& m) {
  return {m.op, m.backend, m.scope, m.path, m.dtype, m.in_place, m.peer_a, m.peer_b, m.nranks, m.groups, m.pass,
          m.redop, m.root};
}

std::map<CurveKey, std::vector<const Measurement*>> curves_of(const std::vector<const Measurement*>& rows) {
  std::map<CurveKey, std::vector<const Measurement*>> out;
  for (const auto* m : rows)
    if (m->time.median_us > 0) out[curve_key_of(*m)].push_back(m);
  for (auto& [key, curve] : out) {
    std::sort(curve.begin(), curve.end(), [](const auto* a, const auto* b) { return a->bytes < b->bytes; });
    curve.erase(std::unique(curve.begin(), curve.end(), [](const auto* a, const auto* b) { return a->bytes == b->bytes; }),
                curve.end());
  }
  return out;
}

std::string host_of(const RunHeader& h, int rank) {
  if (rank < 0 || rank >= static_cast<int>(h.rank_node.size())) return "";
  const int node = h.rank_node[static_cast<std::size_t>(rank)];
  return node >= 0 && node < static_cast<int>(h.hosts.size()) ? h.hosts[static_cast<std::size_t>(node)] : "";
}

std::string rank_text(const RunHeader& h, int rank) {
  const std::string host = host_of(h, rank);
  return host.empty() ? std::to_string(rank) : fmt::format("{} ({})", rank, host);
}

// The world ranks a row ran on, where the row or the header tells.
std::vector<int> ranks_of(const Measurement& m, const RunHeader& h) {
  std::vector<int> out;
  if (!m.rank_mean_us.empty()) {
    for (std::size_t r = 0; r < m.rank_mean_us.size(); ++r)
      if (m.rank_mean_us[r] >= 0) out.push_back(static_cast<int>(r));
    return out;
  }
  if (m.scope == "global") {
    if (m.peer_a >= 0) return {m.peer_a, m.peer_b};
    for (int r = 0; r < m.nranks; ++r) out.push_back(r);
    return out;
  }
  if (m.scope == "inter" && m.peer_a < 0) {  // local rank 0 of every node: the first rank of each
    int last_node = -1;
    for (std::size_t r = 0; r < h.rank_node.size(); ++r)
      if (h.rank_node[r] > last_node) {
        last_node = h.rank_node[r];
        out.push_back(static_cast<int>(r));
      }
    if (static_cast<int>(out.size()) != m.nranks) out.clear();
  }
  return out;
}

std::string ranks_words(const Measurement& m, const std::vector<int>& ranks, const RunHeader& h) {
  std::string out;
  if (ranks.empty()) {
    out = fmt::format("{} ranks{} at scope {}", m.nranks, m.groups > 1 ? fmt::format(" in each of {} groups", m.groups) : "",
                      m.scope);
  } else {
    std::string list;
    for (std::size_t i = 0; i < ranks.size() && i < 16; ++i)
      list += (list.empty() ? "" : ", ") + rank_text(h, ranks[i]);
    if (ranks.size() > 16) list += fmt::format(" and {} more", ranks.size() - 16);
    out = fmt::format("rank{} {}", ranks.size() == 1 ? "" : "s", list);
  }
  if (m.slowest_rank >= 0)
    out += fmt::format("; slowest rank {}{}", rank_text(h, m.slowest_rank),
                       m.slowest_rank_lag_us > 0 ? fmt::format(", the others waited {:.3g} us for it", m.slowest_rank_lag_us)
                                                 : "");
  return out;
}

std::string curve_label(const Measurement& m) {
  std::string label = fmt::format("{}/{} {} {}", m.op, m.scope, m.backend, m.in_place ? "in-place" : "out-of-place");
  if (m.peer_a >= 0) label += fmt::format(" peers {},{}", m.peer_a, m.peer_b);
  if (m.pass > 0) label += fmt::format(" pass {}", m.pass);
  return label;
}

std::string us(double v) { return v >= 1000 ? fmt::format("{:.3g} ms", v / 1000) : fmt::format("{:.3g} us", v); }

// The time the line through (a, c) on log-log axes gives at b's size.
double trend(const Measurement& a, const Measurement& b, const Measurement& c) {
  const double x = std::log(static_cast<double>(b.bytes)), x0 = std::log(static_cast<double>(a.bytes)),
               x1 = std::log(static_cast<double>(c.bytes));
  const double y0 = std::log(a.time.median_us), y1 = std::log(c.time.median_us);
  return std::exp(y0 + (y1 - y0) * (x - x0) / (x1 - x0));
}

void jumps(const std::vector<const Measurement*>& c, const SmoothnessLimits& l, const RunHeader& h,
           std::vector<CurveBreak>& out) {
  for (std::size_t i = 1; i + 1 < c.size(); ++i) {
    if (c[i]->bytes < l.from_bytes || c[i - 1]->bytes == 0) continue;
    const double t = trend(*c[i - 1], *c[i], *c[i + 1]);
    const double factor = c[i]->time.median_us / t;
    if (!(factor > l.max_jump)) continue;
    CurveBreak b{BreakKind::jump, c[i], c[i - 1], c[i + 1], factor, t, ranks_of(*c[i], h), ""};
    b.detail = fmt::format("{}: at {} the time {} is {:.2f}x its neighbours' trend {} ({} at {}, {} at {}; > {:g}x); {}",
                           curve_label(*c[i]), format_bytes(c[i]->bytes), us(c[i]->time.median_us), factor, us(t),
                           us(c[i - 1]->time.median_us), format_bytes(c[i - 1]->bytes), us(c[i + 1]->time.median_us),
                           format_bytes(c[i + 1]->bytes), l.max_jump, ranks_words(*c[i], b.ranks, h));
    out.push_back(std::move(b));
  }
}

void drops(const std::vector<const Measurement*>& c, const SmoothnessLimits& l, const RunHeader& h,
           std::vector<CurveBreak>& out) {
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (c[i]->bytes < l.from_bytes || c[i - 1]->busbw_gbps <= 0) continue;
    const double fell = 1.0 - c[i]->busbw_gbps / c[i - 1]->busbw_gbps;
    if (!(fell > l.max_drop)) continue;
    CurveBreak b{BreakKind::drop, c[i], c[i - 1], nullptr, fell, 0, ranks_of(*c[i], h), ""};
    b.detail = fmt::format("{}: busbw falls {:.0f}% from {:.4g} GB/s at {} to {:.4g} GB/s at {} (> {:.0f}%); {}",
                           curve_label(*c[i]), 100 * fell, c[i - 1]->busbw_gbps, format_bytes(c[i - 1]->bytes),
                           c[i]->busbw_gbps, format_bytes(c[i]->bytes), 100 * l.max_drop,
                           ranks_words(*c[i], b.ranks, h));
    out.push_back(std::move(b));
  }
}

}  // namespace

std::vector<CurveBreak> find_curve_breaks(const std::vector<const Measurement*>& rows, const SmoothnessLimits& limits,
                                          const RunHeader& header) {
  std::vector<CurveBreak> out;
  for (const auto& [key, curve] : curves_of(rows)) {
    if (limits.max_jump > 0) jumps(curve, limits, header, out);
    if (limits.max_drop > 0) drops(curve, limits, header, out);
  }
  return out;
}

std::vector<CurveCliff> find_cliffs(const std::vector<const Measurement*>& rows, const RunHeader& header) {
  std::vector<CurveCliff> out;
  for (const auto& [key, curve] : curves_of(rows)) {
    std::vector<BandwidthPoint> points;
    for (const auto* m : curve) points.push_back({m->bytes, m->busbw_gbps, m->time.median_us});
    const auto cliff = find_cliff(points);
    if (!cliff) continue;
    CurveCliff c{curve[cliff->at - 1],
                 curve[cliff->at],
                 curve.back(),
                 *cliff,
                 ranks_of(*curve[cliff->at], header),
                 curve_label(*curve[cliff->at]),
                 "",
                 ""};
    c.where = fmt::format(
        "at {} busbw falls from {:.4g} GB/s at {} to {:.4g} GB/s, {:.0f}x below the best before it "
        "({:.4g} GB/s), and {}",
        format_bytes(c.at->bytes), c.before->busbw_gbps, format_bytes(c.before->bytes), c.at->busbw_gbps,
        cliff->factor(), cliff->best_gbps,
        c.at == c.last ? std::string("it is the largest size measured")
                       : fmt::format("no size up to {} climbs back above {:.4g} GB/s", format_bytes(c.last->bytes),
                                     cliff->after_gbps));
    c.ranks_text = ranks_words(*c.at, c.ranks, header);
    out.push_back(std::move(c));
  }
  return out;
}

std::size_t curves_with_sizes(const std::vector<const Measurement*>& rows, std::size_t sizes) {
  std::size_t n = 0;
  for (const auto& [key, curve] : curves_of(rows)) n += curve.size() >= sizes;
  return n;
}

}  // namespace fb::accept
