// The page around the sections: head, style (screen and print), title, the
// table of contents and the footer saying what made it. No script, no
// external resource: the file is the whole report.
#include <fmt/format.h>

#include "fabricbench/report/html.hpp"
#include "html_text.hpp"
#include "sections.hpp"

namespace fb::report {
namespace {

constexpr const char* kStyle = R"CSS(
:root { --ink: #1b1f24; --mute: #5b6470; --line: #d0d5db; --bg: #ffffff; --soft: #f4f6f8;
        --pass: #1e8449; --fail: #c0392b; --warn: #b9770e; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); background: var(--bg); margin: 0 auto; max-width: 1240px; padding: 18px 22px 40px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 26px 0 8px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; } h4 { font-size: 13px; margin: 12px 0 4px; }
p { margin: 6px 0; } .note, .caption, .from { color: var(--mute); font-size: 12.5px; }
.warn { color: var(--warn); } .bad, .v-fail, .v-error { color: var(--fail); font-weight: 600; }
.v-pass { color: var(--pass); font-weight: 600; } .v-skip, .v-none { color: var(--mute); }
header .sub { color: var(--mute); }
nav ul { list-style: none; padding: 0; margin: 10px 0; display: flex; flex-wrap: wrap; gap: 6px 16px; }
nav a { color: #0b5394; text-decoration: none; } nav a:hover { text-decoration: underline; }
.banner { font-size: 17px; font-weight: 700; padding: 10px 14px; border-radius: 6px; background: var(--soft); }
.banner.v-pass { background: #e8f6ee; } .banner.v-fail, .banner.v-error, .banner.v-incomplete { background: #fbeaea; color: var(--fail); }
.headline { font-weight: 600; }
table { border-collapse: collapse; margin: 6px 0 10px; font-size: 12.5px; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
table.num td { font-variant-numeric: tabular-nums; white-space: nowrap; }
div.scroll { overflow-x: auto; max-width: 100%; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 6px 0; font-size: 13px; }
dl.facts dt { color: var(--mute); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.node dl { display: grid; grid-template-columns: max-content 1fr; gap: 1px 12px; margin: 4px 0; font-size: 13px; }
.node dt { color: var(--mute); } .node dd { margin: 0; }
.record { border: 1px solid var(--line); border-radius: 6px; padding: 4px 14px 8px; margin: 10px 0; }
figure { margin: 14px 0 20px; break-inside: avoid; }
.pair, .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 8px 18px; align-items: start; }
svg.chart, svg.heatmap { max-width: 100%; height: auto; display: block; }
svg text { font-family: inherit; }
.ct { font-size: 13px; font-weight: 600; fill: var(--ink); }
.at { font-size: 11.5px; fill: var(--mute); } .tl { font-size: 10.5px; fill: #3b424b; }
line.grid { stroke: #e3e6ea; stroke-width: 1; } line.grid.minor { stroke: #f1f2f4; }
line.tick { stroke: #7a828c; } rect.frame { fill: none; stroke: #9aa1aa; }
polyline.series { fill: none; stroke-width: 1.7; } polygon.band { fill-opacity: 0.16; stroke: none; }
line.rule { stroke-width: 1.4; stroke-dasharray: 6 3; } .rl { font-size: 10.5px; }
circle.note { fill: none; stroke: #111; stroke-width: 1.6; } .nl { font-size: 11.5px; font-weight: 700; fill: #111; }
rect.cell { stroke: #fff; stroke-width: 1; } rect.cell.flagged { stroke: var(--fail); stroke-width: 2.2; }
rect.crossed { fill: none; stroke: var(--fail); stroke-width: 2.4; } .flag { font-size: 11px; font-weight: 800; fill: var(--fail); }
.cv { font-size: 9.5px; }
ul.legend { list-style: none; padding: 0; margin: 2px 0 6px 60px; font-size: 12px; display: flex; flex-wrap: wrap; gap: 2px 14px; }
ul.legend li { display: flex; align-items: center; gap: 5px; } ul.legend svg { flex: none; }
ul.largest { font-size: 12.5px; margin: 4px 0; padding-left: 18px; }
details.figures summary, details summary { cursor: pointer; color: #0b5394; font-size: 12.5px; margin: 4px 0; }
footer { margin-top: 30px; color: var(--mute); font-size: 12px; border-top: 1px solid var(--line); padding-top: 8px; }
@media print {
  @page { size: A4; margin: 12mm; }
  body { max-width: none; padding: 0; font-size: 10.5pt; }
  nav, details { display: none; }
  div.scroll { overflow: visible; } table.num td { white-space: normal; }
  .pair, .grid { grid-template-columns: 1fr 1fr; }
  h2 { break-after: avoid; } figure, .record, table, .pairwise { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
}
)CSS";

}  // namespace

std::string render_html(const HtmlInputs& in) {
  section::reset_ids();
  const std::vector<section::Section> sections{section::verdict(in), section::quotes(in),  section::overview(in),
                                               section::health(in),  section::compare(in), section::curves(in),
                                               section::pairs(in)};
  std::string subject;
  for (const auto& r : in.records)
    subject += (subject.empty() ? "" : " against ") + (in.records.size() > 1 ? r.label + " " : "") +
               section::record_identity(r.results);
  std::string toc;
  for (const auto& s : sections)
    if (!s.html.empty()) toc += fmt::format("<li><a href=\"#{}\">{}</a></li>", s.id, html::text(s.title));
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>fabricbench report: " + html::text(subject) + "</title><style>" + kStyle + "</style></head>\n<body>";
  out += fmt::format("<header><h1>fabricbench report</h1><p class=\"sub\">{}</p></header>", html::text(subject));
  out += "<nav><ul>" + toc + "</ul></nav><main>\n";
  for (const auto& s : sections) out += s.html;
  out += fmt::format("</main><footer>Made by {} at {} from {}. One file: nothing here is fetched from a network; "
                     "every figure drawn is also in the page's data attributes and tables.</footer></body></html>\n",
                     html::text(in.generator), html::text(in.generated_at),
                     html::text([&] {
                       std::string files;
                       for (const auto& r : in.records) files += (files.empty() ? "" : ", ") + r.path;
                       if (in.check) files += ", " + in.check->path;
                       if (in.quotes) files += ", " + in.quotes->workload_path + ", " + in.quotes->quotes_path;
                       return files;
                     }()));
  return out;
}

}  // namespace fb::report
