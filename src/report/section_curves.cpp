// Per op and scope: busbw and time against size on log-log axes, one line
// per record, placement, datatype and group shape, the spread over the timed
// iterations shaded, the scope's spec peak (the one `spec` rules use) as a
// line; the figures in a table under each pair of charts.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/stats.hpp"
#include "fabricbench/accept/smoothness.hpp"
#include "fabricbench/accept/spec_peak.hpp"
#include "fabricbench/core/sizes.hpp"
#include "fabricbench/core/types.hpp"
#include "fabricbench/report/svg.hpp"
#include "html_text.hpp"
#include "sections.hpp"

namespace fb::report::section {
namespace {

// One line of a chart: what it is, apart from the record it came from.
struct Kind {
  std::string backend, dtype;
  int nranks = 0, groups = 1;
  bool in_place = false;
  int peer_a = -1, peer_b = -1;
  auto tie() const { return std::tie(backend, dtype, nranks, groups, in_place, peer_a, peer_b); }
  bool operator<(const Kind& o) const { return tie() < o.tie(); }
};

// One size of one line: every row there (several with --duration passes).
struct Size {
  std::vector<const Measurement*> rows;
};

struct Line {
  std::size_t record = 0;
  Kind kind;
  std::map<std::uint64_t, Size> sizes;
};

// The path labels of a line's rows: the spec peak is that of the paths they used.
void add_paths(const Line& l, std::vector<std::string>& paths) {
  for (const auto& [bytes, s] : l.sizes)
    for (const Measurement* m : s.rows) paths.push_back(m->path);
}

struct Figure {
  std::string op, scope;
  std::vector<Line> lines;
  Line& line(std::size_t record, const Kind& k) {
    for (auto& l : lines)
      if (l.record == record && !(l.kind < k) && !(k < l.kind)) return l;
    lines.push_back({record, k, {}});
    return lines.back();
  }
};

// A point from the rows at one size: medians over rows, extremes over them.
struct Figures {
  double time_us = 0, min_us = 0, max_us = 0, p99_us = 0, algbw = 0, busbw = 0;
  std::int64_t wrong = -1;
  std::size_t iterations = 0, rows = 0;
};

Figures figures(const Size& s) {
  Figures f;
  std::vector<double> t, a, b;
  f.min_us = 1e300;
  for (const Measurement* m : s.rows) {
    t.push_back(m->time.median_us);
    a.push_back(m->algbw_gbps);
    b.push_back(m->busbw_gbps);
    f.min_us = std::min(f.min_us, m->time.min_us);
    f.max_us = std::max(f.max_us, m->time.max_us);
    f.p99_us = std::max(f.p99_us, m->time.p99_us);
    f.iterations += m->time.iterations;
    if (m->wrong >= 0) f.wrong = std::max<std::int64_t>(f.wrong, 0) + m->wrong;
  }
  f.time_us = median_of(t);
  f.algbw = median_of(a);
  f.busbw = median_of(b);
  f.rows = s.rows.size();
  return f;
}

std::vector<Figure> gather(const HtmlInputs& in) {
  std::vector<Figure> out;
  for (std::size_t r = 0; r < in.records.size(); ++r) {
    for (const Measurement& m : in.records[r].results.measurements) {
      auto it = std::find_if(out.begin(), out.end(), [&](const Figure& f) { return f.op == m.op && f.scope == m.scope; });
      if (it == out.end()) {
        out.push_back({m.op, m.scope, {}});
        it = out.end() - 1;
      }
      const Kind k{m.backend, m.dtype, m.nranks, m.groups, m.in_place, m.peer_a, m.peer_b};
      it->line(r, k).sizes[m.bytes].rows.push_back(&m);
    }
  }
  // The op table's order, then the scopes' (global, intra, inter, rail, domain).
  const auto op_rank = [](const std::string& op) {
    const auto o = parse_op(op);
    return o ? static_cast<int>(*o) : 1000;
  };
  const auto scope_rank = [](const std::string& s) {
    const auto scope = parse_scope(s);
    return scope ? static_cast<int>(*scope) : 1000;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Figure& a, const Figure& b) {
    return std::pair(op_rank(a.op), scope_rank(a.scope)) < std::pair(op_rank(b.op), scope_rank(b.scope));
  });
  return out;
}

std::string kind_label(const Kind& k, const Figure& f) {
  std::string s = k.in_place ? "in-place" : "out-of-place";
  s += ", " + k.dtype;
  s += fmt::format(", {} rank{}", k.nranks, k.nranks == 1 ? "" : "s");
  if (k.groups > 1) s += fmt::format(" x {} groups", k.groups);
  if (k.peer_a >= 0) s += fmt::format(", ranks {}-{}", k.peer_a, k.peer_b);
  bool backends = false;
  for (const auto& l : f.lines) backends = backends || l.kind.backend != k.backend;
  if (backends) s += ", " + k.backend;
  return s;
}

// Colour by kind, so A and B of the same kind share it (B dashed).
std::size_t kind_index(const Figure& f, const Kind& k) {
  std::vector<Kind> kinds;
  for (const auto& l : f.lines)
    if (std::none_of(kinds.begin(), kinds.end(), [&](const Kind& x) { return !(x < l.kind) && !(l.kind < x); }))
      kinds.push_back(l.kind);
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (!(kinds[i] < k) && !(k < kinds[i])) return i;
  return 0;
}

bool busbw_is_zero(const Figure& f) {
  for (const auto& l : f.lines)
    for (const auto& [bytes, s] : l.sizes)
      for (const Measurement* m : s.rows)
        if (m->busbw_gbps > 0) return false;
  return true;
}

svg::Attributes point_data(const RecordInput& rec, const Figure& f, const Line& l, std::uint64_t bytes,
                           const Figures& x) {
  return {{"record", rec.label},
          {"op", f.op},
          {"scope", f.scope},
          {"dtype", l.kind.dtype},
          {"nranks", std::to_string(l.kind.nranks)},
          {"in-place", l.kind.in_place ? "1" : "0"},
          {"bytes", std::to_string(bytes)},
          {"time-us", html::exact(x.time_us)},
          {"algbw-gbps", html::exact(x.algbw)},
          {"busbw-gbps", html::exact(x.busbw)},
          {"rows", std::to_string(x.rows)}};
}

std::string tip(const std::string& label, std::uint64_t bytes, const Figures& x) {
  return fmt::format("{}\n{}: {} us (min {} .. max {}), algbw {} GB/s, busbw {} GB/s{}", label, format_bytes(bytes),
                     html::num(x.time_us), html::num(x.min_us), html::num(x.max_us), html::num(x.algbw),
                     html::num(x.busbw), x.rows > 1 ? fmt::format(" (median of {} rows)", x.rows) : "");
}

// The scope's spec peak per record, one line where they agree.
std::vector<svg::Rule> peak_rules(const HtmlInputs& in, const Figure& f, std::string& note) {
  std::vector<svg::Rule> out;
  std::vector<std::string> unknown;
  for (const auto& rec : in.records) {
    std::vector<std::string> paths;
    for (const auto& l : f.lines)
      if (&in.records[l.record] == &rec) add_paths(l, paths);
    if (paths.empty()) continue;
    const accept::SpecPeak p = accept::spec_peak(rec.results, f.scope, paths);
    if (!p.known) {
      unknown.push_back(record_prefix(rec, in) + p.reason);
      continue;
    }
    const std::string label = fmt::format("spec peak {} GB/s ({})", html::num(p.gbps), p.basis);
    if (std::any_of(out.begin(), out.end(), [&](const svg::Rule& r) { return r.y == p.gbps; })) continue;
    out.push_back({p.gbps, record_prefix(rec, in) + label, "#C0392B"});
  }
  if (!unknown.empty()) {
    note = "No spec peak line: ";
    for (std::size_t i = 0; i < unknown.size(); ++i) note += (i ? "; " : "") + unknown[i];
    note += ".";
  }
  return out;
}

std::string data_table(const HtmlInputs& in, const Figure& f, bool algbw_only) {
  std::vector<Row> rows;
  for (const auto& l : f.lines) {
    const auto& rec = in.records[l.record];
    for (const auto& [bytes, s] : l.sizes) {
      const Figures x = figures(s);
      rows.push_back({{html::text(record_prefix(rec, in) + kind_label(l.kind, f)), html::text(format_bytes(bytes)),
                       html::num(x.time_us), html::text(html::num(x.min_us) + " .. " + html::num(x.max_us)),
                       html::num(x.p99_us), html::num(x.algbw), algbw_only ? "-" : html::num(x.busbw),
                       x.wrong < 0 ? "-" : std::to_string(x.wrong), std::to_string(x.iterations)},
                      ""});
    }
  }
  return "<details class=\"figures\"><summary>The figures (" + std::to_string(rows.size()) + " rows)</summary>" +
         table({"line", "size", "time (us)", "min .. max (us)", "p99 (us)", "algbw (GB/s)", "busbw (GB/s)",
                "wrong elements", "iterations"},
               rows, "num") +
         "</details>";
}

// The cliffs `run` warned of, under the figure they fall in: the same
// curves, rule and words (accept::find_cliffs), since run's stderr is gone
// and the page is what a reader keeps.
std::string cliff_notes(const HtmlInputs& in, const Figure& f) {
  std::string out;
  for (const auto& rec : in.records) {
    std::vector<const Measurement*> rows;
    for (const auto& m : rec.results.measurements)
      if (m.op == f.op && m.scope == f.scope) rows.push_back(&m);
    for (const auto& c : accept::find_cliffs(rows, rec.results.header))
      out += fmt::format(
          "<li class=\"cliff\">{}cliff in {}: {}: {}; <code>model</code> prices this link from the sizes below "
          "it</li>",
          html::text(record_prefix(rec, in)), html::text(c.curve), html::text(c.where),
          html::text(std::string(accept::kCliffMeaning)));
  }
  return out;
}

// "at 8 GiB: busbw 476 GB/s, 84% of the spec peak" for each line's largest size.
std::string caption(const HtmlInputs& in, const Figure& f, bool algbw_only, const std::vector<svg::Rule>& peaks) {
  std::string out;
  for (const auto& l : f.lines) {
    if (l.sizes.empty()) continue;
    const auto& [bytes, s] = *l.sizes.rbegin();
    const Figures x = figures(s);
    const auto& rec = in.records[l.record];
    const double bw = algbw_only ? x.algbw : x.busbw;
    std::string of_peak;
    std::vector<std::string> paths;
    add_paths(l, paths);
    const accept::SpecPeak p = accept::spec_peak(rec.results, f.scope, paths);
    // One rank moves its bytes inside its own memory: no link's peak applies.
    if (!algbw_only && l.kind.nranks > 1 && p.known && p.gbps > 0) of_peak = fmt::format(", {} of the spec peak", html::pct(bw / p.gbps));
    out += fmt::format("<li>{}: at {} {} {} GB/s{}, {} us</li>",
                       html::text(record_prefix(rec, in) + kind_label(l.kind, f)), html::text(format_bytes(bytes)),
                       algbw_only ? "algbw" : "busbw", html::num(bw), of_peak, html::num(x.time_us));
  }
  out += cliff_notes(in, f);
  (void)peaks;
  return out.empty() ? out : "<ul class=\"largest\">" + out + "</ul>";
}

std::string figure_html(const HtmlInputs& in, const Figure& f) {
  const bool algbw_only = busbw_is_zero(f);
  svg::Chart bw, time;
  bw.id = next_id("bw");
  time.id = next_id("t");
  bw.title = fmt::format("{} / {}: {}", f.op, f.scope, algbw_only ? "algbw" : "busbw");
  time.title = fmt::format("{} / {}: time per op", f.op, f.scope);
  bw.x = time.x = svg::Axis{"size (bytes, nccl-tests convention)", svg::Scale::log, svg::TickFormat::bytes};
  bw.y = svg::Axis{algbw_only ? "algbw (GB/s)" : "busbw (GB/s)"};
  time.y = svg::Axis{"time per op, median (us)"};
  for (const auto& l : f.lines) {
    const auto& rec = in.records[l.record];
    const std::string label = record_prefix(rec, in) + kind_label(l.kind, f);
    svg::Series sb, st;
    sb.label = st.label = label;
    sb.colour = st.colour = colour(kind_index(f, l.kind));
    sb.dashed = st.dashed = l.record % 2 == 1;
    for (const auto& [bytes, s] : l.sizes) {
      if (bytes == 0) continue;
      const Figures x = figures(s);
      const double b = algbw_only ? x.algbw : x.busbw;
      const auto x_bytes = static_cast<double>(bytes);
      sb.points.push_back({x_bytes, b, tip(label, bytes, x), point_data(rec, f, l, bytes, x)});
      st.points.push_back({x_bytes, x.time_us, tip(label, bytes, x), {{"bytes", std::to_string(bytes)},
                                                                       {"time-us", html::exact(x.time_us)}}});
      // busbw goes as 1/time: the fastest iteration gives the top of the band.
      if (x.time_us > 0 && x.max_us > x.min_us) {
        sb.band.push_back({x_bytes, b * x.time_us / x.max_us, x.min_us > 0 ? b * x.time_us / x.min_us : b});
        st.band.push_back({x_bytes, x.min_us, x.max_us});
      }
    }
    bw.series.push_back(std::move(sb));
    time.series.push_back(std::move(st));
  }
  std::string peak_note;
  bool one_rank = true;
  for (const auto& l : f.lines) one_rank = one_rank && l.kind.nranks == 1;
  if (!algbw_only && one_rank) {
    // A one-rank sendrecv to itself has busbw = algbw, but crosses no link:
    // the scope's spec peak (a PCIe or NIC rate) would read as 30x exceeded.
    peak_note = "One rank: its bytes stay in its own memory and cross no link, so no spec peak line.";
  } else if (!algbw_only) {
    bw.rules = peak_rules(in, f, peak_note);
  } else {
    peak_note = one_rank ? "busbw is 0 on one rank (nothing crosses a link), so this chart shows algbw, without a "
                           "spec peak line."
                         : "Every row's busbw is 0, so this chart shows algbw, without a spec peak line.";
  }
  std::string out = fmt::format("<figure class=\"curves\" data-op=\"{}\" data-scope=\"{}\"><div class=\"pair\">"
                                "<div>{}</div><div>{}</div></div><figcaption>{}{}</figcaption>{}</figure>",
                                html::attr(f.op), html::attr(f.scope), svg::render(bw), svg::render(time),
                                caption(in, f, algbw_only, bw.rules),
                                peak_note.empty() ? "" : "<p class=\"note\">" + html::text(peak_note) + "</p>",
                                data_table(in, f, algbw_only));
  return out;
}

}  // namespace

Section curves(const HtmlInputs& in) {
  const auto figs = gather(in);
  if (figs.empty()) return {"curves", "Curves", ""};
  std::string body =
      "<p>Each op at each scope: bandwidth and time per op against the message size, both on log scales. Points "
      "are the median over the timed iterations (the slowest rank of each); the shaded band is their spread, "
      "fastest to slowest iteration. The dashed red line is the path's spec peak from the inventory, the figure "
      "spec rules compare against.</p>";
  for (const auto& f : figs) body += figure_html(in, f);
  return {"curves", "Curves", wrap("curves", "Bandwidth and time per op", body)};
}

}  // namespace fb::report::section
