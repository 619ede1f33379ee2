#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "fabricbench/core/modes.hpp"
#include "fabricbench/core/pairs_report.hpp"
#include "fabricbench/core/text_table.hpp"

namespace fb {
namespace {

std::string host(const PairsLabels& l, int position) { return l.hosts[static_cast<std::size_t>(position)]; }

// Three significant figures from 400G NICs (≈ 48 GB/s) down to 1GbE (0.119).
std::string gbps(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  if (v >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3f}", v);
}

std::string worst_named(const std::string& worst, const std::string& a, const std::string& b) {
  if (worst == "unidir a->b") return fmt::format("unidir {}->{}", a, b);
  if (worst == "unidir b->a") return fmt::format("unidir {}->{}", b, a);
  return worst;
}

std::string retest_clause(const Finding& f, const Analysis& a, const PairsLabels& l, const char* low_means,
                          const char* normal_means) {
  if (f.retested_against < 0 && !a.third_node_exists())
    return "; the pair is at fault: with two nodes nothing can tell which end, or the link between them (a third "
           "node would)";
  if (f.retested_against < 0)
    return "; not retested: no node has all its links good, so node and link cannot be told apart";
  return fmt::format("; retested against {}: {:.2f} of the reference, {}", host(l, f.retested_against), f.retest_ratio,
                     f.confirmed ? low_means : normal_means);
}

using Cell = std::function<std::optional<std::string>(int row, int column)>;

// Square: every column as wide as the longest host name (at least 7), so
// the matrix reads by row and by column alike.
void matrix(std::string& out, const std::string& title, const PairsLabels& l, const Cell& cell) {
  std::size_t width = 7;
  for (const auto& h : l.hosts) width = std::max(width, h.size());
  TextTable t;
  t.columns.push_back({.head = "", .min_width = width});
  for (const auto& h : l.hosts) t.columns.push_back({.head = h, .align = Align::right, .min_width = width});
  const int n = static_cast<int>(l.hosts.size());
  for (int r = 0; r < n; ++r) {
    std::vector<std::string> cells{host(l, r)};
    for (int c = 0; c < n; ++c) cells.push_back(r == c ? "-" : cell(r, c).value_or("?"));
    t.add_row(std::move(cells));
  }
  out += title + "\n" + render(t) + "\n";
}

std::string node_table(const Analysis& a, const PairsLabels& l) {
  const auto figure = [](const char* head, std::size_t width) {
    return TextColumn{.head = head, .align = Align::right, .min_width = width, .gap = " "};
  };
  TextTable t;
  t.columns = {{.head = "node", .min_width = 20}, figure("links", 5),       figure("low", 4),
               figure("unidir med", 11),          figure("unidir min", 11), figure("bidir med", 11),
               figure("latency us", 11),          {.head = ""}};
  for (const NodeSummary& s : a.nodes)
    t.add_row({host(l, s.node), std::to_string(s.links), std::to_string(s.low_links), gbps(s.unidir_median_gbps),
               gbps(s.unidir_min_gbps), gbps(s.bidir_median_gbps), fmt::format("{:.1f}", s.latency_median_us),
               s.suspect ? "suspect" : (s.node == a.reference_node ? "reference for retests" : "")});
  return render(t);
}

void rail_report(std::string& out, const PairsResult& r, const PairsLabels& l, int rail) {
  const auto& m = r.matrices[static_cast<std::size_t>(rail)];
  const Analysis& a = r.analyses[static_cast<std::size_t>(rail)];
  auto low = [&](int x, int y) {
    const NodePair p{std::min(x, y), std::max(x, y)};
    return std::any_of(a.links.begin(), a.links.end(), [&](const LinkVerdict& v) { return v.pair == p && v.low; });
  };
  // A star on the figure that is below the reference, of a link judged low:
  // not on every figure of that link (its other direction may be at speed).
  auto mark = [&](int x, int y, double figure, double reference) {
    const bool below = reference > 0 && figure < a.options.threshold * reference;
    return gbps(figure) + (below && low(x, y) ? "*" : "");
  };
  if (r.rails > 1) out += fmt::format("## rail {} (local rank {} on every node)\n\n", rail, rail);
  matrix(out, "unidir GB/s, row sends to column (* = low link)", l, [&](int x, int y) -> std::optional<std::string> {
    if (const auto f = m.get(x, y)) return mark(x, y, f->unidir_ab_gbps, a.refs.unidir_gbps);
    return std::nullopt;
  });
  matrix(out, "bidir GB/s, both directions counted", l, [&](int x, int y) -> std::optional<std::string> {
    if (const auto f = m.get(x, y)) return mark(x, y, f->bidir_gbps, a.refs.bidir_gbps);
    return std::nullopt;
  });
  matrix(out, fmt::format("latency us, half round trip of {} B", l.options.latency_bytes), l,
         [&](int x, int y) -> std::optional<std::string> {
           if (const auto f = m.get(x, y)) return fmt::format("{:.1f}", f->latency_us);
           return std::nullopt;
         });
  out += node_table(a, l);
  if (a.refs.lone_link) {
    out += fmt::format(
        "reference: none for bandwidth: one link, nothing to hold it against (--expect-gbps G judges "
        "it against G GB/s); latency {:.1f} us\n\n",
        a.refs.latency_us);
    return;
  }
  out += fmt::format("reference{}: unidir {} GB/s, bidir {} GB/s, latency {:.1f} us; a link is low below {:.2f} x "
                     "the reference\n\n",
                     a.refs.expected ? " (--expect-gbps)" : " (median over nodes of each node's median)",
                     gbps(a.refs.unidir_gbps), gbps(a.refs.bidir_gbps), a.refs.latency_us, a.options.threshold);
}

}  // namespace

std::string describe(const Finding& f, const Analysis& an, const PairsLabels& l) {
  if (f.kind == Finding::Kind::node) {
    std::string s = f.link.a >= 0
                        ? fmt::format("node {}: its link to {} measured {:.2f} of the reference", host(l, f.node),
                                      host(l, f.link.a == f.node ? f.link.b : f.link.a), f.ratio)
                        : fmt::format("node {}: {} of {} links low, the worst at {:.2f} of the reference",
                                      host(l, f.node), f.low_links, f.links, f.ratio);
    return s + retest_clause(f, an, l, "low again: the node is at fault", "normal: intermittent");
  }
  const std::string a = host(l, f.link.a);
  const std::string b = host(l, f.link.b);
  std::string s = fmt::format("link {} - {}: {:.2f} of the reference ({})", a, b, f.ratio, worst_named(f.worst, a, b));
  if (f.retested_against < 0) return s + retest_clause(f, an, l, "", "");
  return s + fmt::format("; both ends are normal against {}, so the link itself is at fault; measured again it was "
                         "{:.2f} of the reference ({})",
                         host(l, f.retested_against), f.retest_ratio, f.confirmed ? "low again" : "normal: intermittent");
}

std::string format_report(const PairsResult& r, const PairsLabels& l) {
  std::string out;
  for (int rail = 0; rail < r.rails; ++rail) rail_report(out, r, l, rail);
  const std::size_t count = r.finding_count();
  const std::size_t failing = r.failing_count();
  out += count == 0 ? "findings: none\n"
                    : fmt::format("findings: {} ({} intermittent: normal when retested)\n", count, count - failing);
  for (int rail = 0; rail < r.rails; ++rail)
    for (const Finding& f : r.findings[static_cast<std::size_t>(rail)])
      out += fmt::format("  {}{}\n", r.rails > 1 ? fmt::format("rail {}: ", rail) : "",
                         describe(f, r.analyses[static_cast<std::size_t>(rail)], l));
  const auto bad = bad_hosts(r, l);
  if (!bad.empty()) out += fmt::format("bad nodes: {}\n", fmt::join(bad, ","));
  // A link whose times fell into two modes: its median is a figure no iteration had (core/modes.hpp).
  for (const PairMeasurement& m : r.measured)
    if (m.modes)
      out += fmt::format("bimodal: link {} - {}{} {}: {}\n", host(l, m.job.pair.a), host(l, m.job.pair.b),
                         r.rails > 1 ? fmt::format(" (rail {})", m.job.rail) : "", m.modes_op, modes_text(*m.modes));
  return out;
}

}  // namespace fb
