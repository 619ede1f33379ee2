// The node-pair matrix of `fabricbench pairs` (or a check with pairs): one
// bandwidth heatmap anchored at the rate the links should reach, one
// latency heatmap on a log scale, bad nodes outlined, low links flagged; the
// per-node figures and the findings under them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "fabricbench/core/stats.hpp"
#include "fabricbench/report/svg.hpp"
#include "html_text.hpp"
#include "sections.hpp"

namespace fb::report::section {
namespace {

// The rate a link should reach, and where that figure comes from. The
// data's own median is the last resort: a fabric that is slow everywhere
// would look fine against it.
struct Anchor {
  double gbps = 1;
  std::string text;
  bool judges = true;  // cells below the run's threshold of it are flagged
};

Anchor bandwidth_anchor(const Results& r, int rail, const std::vector<double>& values) {
  const auto& opts = r.header.options.get();
  if (opts.is_object() && opts.contains("expect_gbps") && opts["expect_gbps"].is_number() &&
      opts["expect_gbps"].get<double>() > 0) {
    const double e = opts["expect_gbps"].get<double>();
    return {e, fmt::format("{} GB/s, the rate the run expected (--expect-gbps)", html::num(e))};
  }
  // What a healthy node's NICs offer: the typical node's spec peak (the
  // upper median over nodes), not the slowest node's (a degraded port would
  // set the bar at its own rate and look fine).
  const std::string scope = rail > 0 ? "rail" : "inter";
  std::map<std::string, double> node_peak;
  std::map<std::string, std::string> node_basis;
  std::string unknown;
  for (const auto& line : r.inventory)
    for (const auto& path : line.paths) {
      if (path.scope != scope) continue;
      if (path.peak_gbps && *path.peak_gbps > 0) {
        auto [it, added] = node_peak.emplace(line.host, *path.peak_gbps);
        if (!added && *path.peak_gbps < it->second) it->second = *path.peak_gbps;
        node_basis[line.host] = path.cls + ": " + path.basis;
      } else if (unknown.empty()) {
        unknown = path.unknown_reason;
      }
    }
  if (!node_peak.empty()) {
    std::vector<std::pair<double, std::string>> peaks;
    for (const auto& [host, gbps] : node_peak) peaks.emplace_back(gbps, host);
    std::sort(peaks.begin(), peaks.end());
    const auto& [gbps, host] = peaks[peaks.size() / 2];
    return {gbps, fmt::format("{} GB/s, the NICs' spec peak of the typical node ({}; {} of {} nodes' inventories "
                              "give a peak)",
                              html::num(gbps), node_basis[host], node_peak.size(), r.header.nodes)};
  }
  if (r.summary && r.summary->pairs && r.summary->pairs->reference_unidir_gbps > 0) {
    const double ref = r.summary->pairs->reference_unidir_gbps;
    return {ref, fmt::format("{} GB/s, the run's reference (the median node's unidir; no spec peak is known{})",
                             html::num(ref), unknown.empty() ? "" : ": " + unknown)};
  }
  // Only to colour by: a lone link's median is its own two directions, and
  // the run held it against nothing (no reference), so nothing is flagged by it.
  const double m = median_of(values);
  return {m > 0 ? m : 1,
          fmt::format("{} GB/s, the median link (no spec peak or reference is known; nothing is judged against it)",
                      html::num(m)),
          false};
}

struct Matrix {
  std::vector<int> nodes;  // node index per row
  std::vector<std::string> hosts;
  std::map<int, std::size_t> at;
};

Matrix matrix_of(const std::vector<const PairLine*>& pairs) {
  Matrix m;
  std::map<int, std::string> names;
  for (const PairLine* p : pairs) {
    names[p->node_a] = p->host_a;
    names[p->node_b] = p->host_b;
  }
  for (const auto& [node, host] : names) {
    m.at[node] = m.nodes.size();
    m.nodes.push_back(node);
    m.hosts.push_back(host.empty() ? fmt::format("node {}", node) : host);
  }
  return m;
}

std::string heatmaps(const RecordInput& rec, const HtmlInputs& in, int rail) {
  const Results& r = rec.results;
  std::vector<const PairLine*> pairs;
  for (const auto& p : r.pairs)
    if (!p.retest && p.rail == rail) pairs.push_back(&p);
  if (pairs.empty()) return {};
  const Matrix mx = matrix_of(pairs);
  const std::size_t n = mx.nodes.size();
  std::set<std::pair<int, int>> low_links;
  std::vector<int> crossed;
  for (const auto& f : r.findings) {
    if (f.rail != rail) continue;
    if (f.kind == "link") low_links.insert({std::min(f.node_a, f.node_b), std::max(f.node_a, f.node_b)});
    if (f.kind == "node" && mx.at.count(f.node)) crossed.push_back(static_cast<int>(mx.at.at(f.node)));
  }
  std::vector<double> unidir, latency;
  for (const PairLine* p : pairs) {
    for (const auto& v : {p->unidir_ab_gbps, p->unidir_ba_gbps})
      if (v) unidir.push_back(*v);
    if (p->latency_us) latency.push_back(*p->latency_us);
  }
  // Not a structured binding: the lambda below reads the anchor, and clang
  // before 16 cannot capture a binding (CI's sanitizer tree builds with clang).
  const Anchor expected = bandwidth_anchor(r, rail, unidir);
  const double anchor = expected.gbps;
  const std::string& anchor_text = expected.text;
  const double threshold = expected.judges && r.summary && r.summary->pairs ? r.summary->pairs->threshold : 0.0;
  svg::Heatmap bw, lat;
  bw.id = next_id("hm");
  lat.id = next_id("hm");
  const std::string where = record_prefix(rec, in) + (rail > 0 ? fmt::format("rail {}: ", rail) : "");
  bw.title = where + "one-way bandwidth, row sends to column (GB/s)";
  lat.title = where + "latency, half round trip (us)";
  lat.row_title = "node";
  lat.column_title = "node";
  bw.labels = lat.labels = mx.hosts;
  bw.cells.assign(n, std::vector<svg::Cell>(n));
  lat.cells.assign(n, std::vector<svg::Cell>(n));
  bw.anchor = anchor;
  bw.anchor_text = anchor_text;
  bw.unit = "GB/s";
  bw.crossed = lat.crossed = crossed;
  lat.scale = svg::Scale::log;
  lat.unit = "us";
  const double lat_ref = median_of(latency);
  lat.anchor = lat_ref > 0 ? lat_ref : 1;
  lat.anchor_text = fmt::format("{} us, the median link's latency (no expected latency is recorded)",
                                html::num(lat_ref));
  for (const PairLine* p : pairs) {
    const std::size_t a = mx.at.at(p->node_a), b = mx.at.at(p->node_b);
    const bool low = low_links.count({std::min(p->node_a, p->node_b), std::max(p->node_a, p->node_b)}) > 0;
    const auto put = [&](std::size_t row, std::size_t col, std::optional<double> v) {
      svg::Cell& c = bw.cells[row][col];
      c.value = v;
      c.flagged = low || (v && threshold > 0 && *v < threshold * anchor);
      c.tip = fmt::format("{} -> {}: {} GB/s ({} of {} GB/s)", mx.hosts[row], mx.hosts[col], v ? html::num(*v) : "-",
                          v ? html::pct(*v / anchor) : "-", html::num(anchor));
      c.data = {{"from", mx.hosts[row]}, {"to", mx.hosts[col]}, {"gbps", v ? html::exact(*v) : ""}};
    };
    put(a, b, p->unidir_ab_gbps);
    put(b, a, p->unidir_ba_gbps);
    for (const auto& [row, col] : {std::pair(a, b), std::pair(b, a)}) {
      svg::Cell& c = lat.cells[row][col];
      c.value = p->latency_us;
      c.flagged = low;
      c.tip = fmt::format("{} - {}: {} us", mx.hosts[row], mx.hosts[col], p->latency_us ? html::num(*p->latency_us) : "-");
      c.data = {{"from", mx.hosts[row]}, {"to", mx.hosts[col]}, {"us", p->latency_us ? html::exact(*p->latency_us) : ""}};
    }
  }
  std::string out = "<div class=\"grid\"><div>" + svg::render(bw) + "</div><div>" + svg::render(lat) + "</div></div>";
  // Per node, as the run judged it.
  std::vector<Row> rows;
  for (const auto& nd : r.nodes) {
    if (nd.rail != rail) continue;
    rows.push_back({{html::text(nd.host), std::to_string(nd.links), std::to_string(nd.low_links),
                     html::num(nd.unidir_median_gbps), html::num(nd.unidir_min_gbps), html::num(nd.bidir_median_gbps),
                     html::num(nd.latency_median_us),
                     nd.suspect ? "<span class=\"v-fail\">suspect</span>" : nd.reference_node ? "reference" : ""},
                    fmt::format(" data-host=\"{}\" data-suspect=\"{}\"", html::attr(nd.host), nd.suspect ? 1 : 0)});
  }
  if (!rows.empty())
    out += table({"node", "links", "low links", "unidir median (GB/s)", "unidir min (GB/s)", "bidir median (GB/s)",
                  "latency median (us)", ""},
                 rows, "num");
  std::string findings;
  for (const auto& f : r.findings)
    if (f.rail == rail)
      findings += fmt::format("<li class=\"{}\">{} {}: {}</li>", f.confirmed ? "v-fail" : "",
                              html::text(f.kind), html::text(fmt::format("{}", fmt::join(f.hosts, " - "))),
                              html::text(f.detail));
  if (!findings.empty()) out += "<ul class=\"findings\">" + findings + "</ul>";
  return out;
}

}  // namespace

Section pairs(const HtmlInputs& in) {
  std::string body;
  for (const auto& rec : in.records) {
    std::set<int> rails;
    for (const auto& p : rec.results.pairs) rails.insert(p.rail);
    for (int rail : rails) body += heatmaps(rec, in, rail);
  }
  if (body.empty()) return {"pairs", "Pair matrix", ""};
  body = "<p>Every node pair as the pairs run measured it. Bandwidth cells are coloured against the rate a link "
         "should reach, not against the other links, so a fabric slow everywhere is dark everywhere; latency on a "
         "log scale against the median link. Outlined rows and columns are nodes the run found bad; cells marked ! "
         "are links below the run's threshold.</p>" +
         body;
  return {"pairs", "Pair matrix", wrap("pairs", "Node pairs", body)};
}

}  // namespace fb::report::section
