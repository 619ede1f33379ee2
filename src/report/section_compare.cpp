// Two records side by side (every later record against the first): the
// ratio of median times per op, scope and size, as `report compare` reckons
// it (model/compare.hpp), and the rows that differ beyond their own
// run-to-run spread.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "fabricbench/core/sizes.hpp"
#include "fabricbench/model/compare.hpp"
#include "fabricbench/report/svg.hpp"
#include "html_text.hpp"
#include "sections.hpp"

namespace fb::report::section {
namespace {

using model::CompareRow;
using model::Difference;

std::string kind_of(const CompareRow& r) {
  return fmt::format("{}, {}, {} rank{}{}", r.in_place ? "in-place" : "out-of-place", r.dtype, r.nranks,
                     r.nranks == 1 ? "" : "s", r.groups > 1 ? fmt::format(" x {} groups", r.groups) : "");
}

std::string chart(const std::string& op, const std::string& scope, const std::vector<const CompareRow*>& rows,
                  const RecordInput& a, const RecordInput& b) {
  svg::Chart c;
  c.id = next_id("cmp");
  c.title = fmt::format("{} / {}: time {} / time {}", op, scope, b.label, a.label);
  c.x = svg::Axis{"size (bytes, nccl-tests convention)", svg::Scale::log, svg::TickFormat::bytes};
  c.y = svg::Axis{fmt::format("median time {} / {} (> 1: {} slower)", b.label, a.label, b.label)};
  std::map<std::string, std::size_t> kinds;
  svg::Series slower, faster;
  slower.label = fmt::format("{} slower beyond the spread ([min, p99] apart)", b.label);
  faster.label = fmt::format("{} faster beyond the spread", b.label);
  slower.colour = "#C0392B";
  faster.colour = "#1E8449";
  slower.line = faster.line = false;
  slower.marker_size = faster.marker_size = 4.2;
  for (const CompareRow* r : rows) {
    const std::string k = kind_of(*r);
    if (!kinds.count(k)) {
      kinds[k] = c.series.size();
      svg::Series s;
      s.label = k;
      s.colour = colour(c.series.size());
      c.series.push_back(s);
    }
    svg::Point p{static_cast<double>(r->bytes), r->ratio,
                 fmt::format("{} {}: {} {} us, {} {} us: {}x ({})", k, format_bytes(r->bytes), a.label,
                             html::num(r->a.time.median_us), b.label, html::num(r->b.time.median_us),
                             html::num(r->ratio), name(r->diff)),
                 {{"op", r->op},
                  {"scope", r->scope},
                  {"bytes", std::to_string(r->bytes)},
                  {"in-place", r->in_place ? "1" : "0"},
                  {"b-over-a", html::exact(r->ratio)},
                  {"verdict", std::string(name(r->diff))}}};
    if (r->diff == Difference::slower) slower.points.push_back({p.x, p.y, "", {}});
    if (r->diff == Difference::faster) faster.points.push_back({p.x, p.y, "", {}});
    c.series[kinds[k]].points.push_back(std::move(p));
  }
  // Wide enough to show "the same" as the middle of the chart.
  double lo = 1, hi = 1;
  for (const CompareRow* r : rows)
    if (r->ratio > 0) {
      lo = std::min(lo, r->ratio);
      hi = std::max(hi, r->ratio);
    }
  c.y.lo = std::min(0.5, lo / 1.15);  // room around the extreme points
  c.y.hi = std::max(2.0, hi * 1.15);
  if (!slower.points.empty()) c.series.push_back(slower);
  if (!faster.points.empty()) c.series.push_back(faster);
  c.rules.push_back({1.0, "the same", "#555555"});
  return svg::render(c);
}

std::string one_pair(const RecordInput& a, const RecordInput& b) {
  const model::Comparison cmp = model::compare_results(a.results, b.results);
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<const CompareRow*>> both;
  std::vector<Row> table_rows;
  for (const auto& r : cmp.rows) {
    const bool paired = r.diff != Difference::only_a && r.diff != Difference::only_b;
    if (paired) {
      const auto key = std::pair(r.op, r.scope);
      if (!both.count(key)) order.push_back(key);
      both[key].push_back(&r);
    }
    table_rows.push_back(
        {{html::text(r.op), html::text(r.scope), html::text(kind_of(r)), html::text(format_bytes(r.bytes)),
          r.diff == Difference::only_b ? "-" : html::num(r.a.time.median_us),
          r.diff == Difference::only_a ? "-" : html::num(r.b.time.median_us), paired ? html::num(r.ratio) : "-",
          r.diff == Difference::only_b ? "-" : html::num(r.a.busbw_gbps),
          r.diff == Difference::only_a ? "-" : html::num(r.b.busbw_gbps),
          fmt::format("<span class=\"v-{}\">{}</span>", r.diff == Difference::slower   ? "fail"
                                                        : r.diff == Difference::faster ? "pass"
                                                                                       : "none",
                      html::text(name(r.diff)))},
         paired ? fmt::format(" data-b-over-a=\"{}\"", html::exact(r.ratio)) : ""});
  }
  std::string out = fmt::format(
      "<div class=\"pairwise\" data-a=\"{}\" data-b=\"{}\" data-slower=\"{}\" data-faster=\"{}\"><h3>{} against {}</h3>"
      "<p><b>{}</b> is {}.<br><b>{}</b> is {}.</p><p class=\"headline\">{} rows in both: {} slower and {} faster in {} "
      "beyond their run-to-run spread (their [min, p99] ranges do not overlap); {} only in {}, {} only in {}.</p>",
      html::attr(a.label), html::attr(b.label), cmp.slower, cmp.faster, html::text(b.label), html::text(a.label),
      html::text(a.label), html::text(record_identity(a.results)), html::text(b.label),
      html::text(record_identity(b.results)), cmp.rows.size() - cmp.only_a - cmp.only_b, cmp.slower, cmp.faster,
      html::text(b.label), cmp.only_a, html::text(a.label), cmp.only_b, html::text(b.label));
  for (const auto& u : cmp.unlike)
    out += fmt::format("<p class=\"note unlike\">Unlike setups (a = {}, b = {}): {}</p>", html::text(a.label),
                       html::text(b.label), html::text(u));
  out += "<div class=\"grid\">";
  for (const auto& key : order) out += "<div>" + chart(key.first, key.second, both[key], a, b) + "</div>";
  out += "</div>";
  out += "<details class=\"figures\"><summary>Every row compared (" + std::to_string(table_rows.size()) +
         ")</summary>" +
         table({"op", "scope", "line", "size", a.label + " time (us)", b.label + " time (us)",
                b.label + " / " + a.label, a.label + " busbw (GB/s)", b.label + " busbw (GB/s)", "verdict"},
               table_rows, "num") +
         "</details></div>";
  return out;
}

}  // namespace

Section compare(const HtmlInputs& in) {
  if (in.records.size() < 2) return {"compare", "Comparison", ""};
  std::string body =
      "<p>Each later record against the first, row by row (same op, scope, ranks, datatype, placement and "
      "size): the ratio of median times, above 1 where the later one is slower. Rows whose [min, p99] ranges do "
      "not overlap differ beyond their run-to-run spread; rows with one time (imported nccl-tests rows) have no "
      "spread, so any difference counts.</p>";
  for (std::size_t i = 1; i < in.records.size(); ++i) body += one_pair(in.records[0], in.records[i]);
  return {"compare", "Comparison", wrap("compare", "Side by side", body)};
}

}  // namespace fb::report::section
