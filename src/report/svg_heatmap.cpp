// Heatmaps as inline SVG, the colour of each cell its value against a stated
// anchor (the expected rate or time), with the scale drawn beside it.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "fabricbench/report/svg.hpp"
#include "html_text.hpp"
#include "svg_parts.hpp"

namespace fb::report::svg {
namespace {

// viridis at eight stops (van der Walt and Smith, matplotlib 2015): dark to
// bright, monotonic in lightness, so it reads in grey print too.
constexpr std::array<std::array<int, 3>, 8> kStops{{{68, 1, 84},
                                                     {70, 50, 126},
                                                     {54, 92, 141},
                                                     {39, 127, 142},
                                                     {31, 161, 135},
                                                     {74, 193, 109},
                                                     {160, 218, 57},
                                                     {253, 231, 37}}};


// Position on the scale, 1 = as good as the anchor or better.
double goodness(const Heatmap& m, double v) {
  if (m.scale == Scale::log) {
    if (!(v > 0)) return 1;
    return 1 - std::clamp(std::log2(v / m.anchor) / 4, 0.0, 1.0);
  }
  return std::clamp(v / m.anchor, 0.0, 1.0);
}

std::string scale_legend(const Heatmap& m, double x, double y, double h) {
  std::string out = fmt::format("<defs><linearGradient id=\"{}-grad\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">",
                                html::attr(m.id));
  for (std::size_t i = 0; i < kStops.size(); ++i)
    out += fmt::format("<stop offset=\"{:.3f}\" stop-color=\"{}\"/>", static_cast<double>(i) / (kStops.size() - 1),
                       ramp(static_cast<double>(i) / (kStops.size() - 1)));
  out += "</linearGradient></defs>";
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"{}\" fill=\"url(#{}-grad)\" stroke=\"#555\" "
                     "stroke-width=\"0.5\"/>",
                     fmt1(x), fmt1(y), fmt1(h), html::attr(m.id));
  std::vector<std::pair<double, std::string>> marks;
  if (m.scale == Scale::log) {
    marks = {{1, "1x"}, {0.75, "2x"}, {0.5, "4x"}, {0.25, "8x"}, {0, ">= 16x"}};
  } else {
    marks = {{1, ">= 1x"}, {0.75, "0.75x"}, {0.5, "0.5x"}, {0.25, "0.25x"}, {0, "0"}};
  }
  for (const auto& [t, text] : marks) {
    const double py = y + (1 - t) * h;
    out += fmt::format("<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/><text class=\"tl\" x=\"{3}\" "
                       "y=\"{4}\">{5}</text>",
                       fmt1(x + 14), fmt1(py), fmt1(x + 18), fmt1(x + 20), fmt1(py + 3.5), html::text(text));
  }
  return out;
}

}  // namespace

std::string ramp(double t) {
  t = std::clamp(t, 0.0, 1.0) * (kStops.size() - 1);
  const auto i = std::min(static_cast<std::size_t>(t), kStops.size() - 2);
  const double f = t - static_cast<double>(i);
  std::array<int, 3> c{};
  for (int k = 0; k < 3; ++k)
    c[k] = static_cast<int>(std::lround(kStops[i][k] + f * (kStops[i + 1][k] - kStops[i][k])));
  return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
}

std::string render(const Heatmap& m) {
  const auto n = static_cast<int>(m.labels.size());
  std::size_t longest = 4;
  for (const auto& l : m.labels) longest = std::max(longest, l.size());
  const double label_w = std::min(160.0, 12 + 6.2 * static_cast<double>(longest));
  const double cell = std::clamp(520.0 / std::max(n, 1), 9.0, 46.0);
  const double left = label_w + 18, top = label_w * 0.72 + 34;
  const double grid = cell * n;
  const double width = left + grid + 110, height = std::max(top + grid + 30, top + 190);
  std::string out = fmt::format(
      "<svg class=\"heatmap\" id=\"{0}\" viewBox=\"0 0 {1:.0f} {2:.0f}\" width=\"{1:.0f}\" height=\"{2:.0f}\" "
      "role=\"img\" aria-label=\"{3}\" data-anchor=\"{4}\" data-scale=\"{5}\">",
      html::attr(m.id), width, height, html::attr(m.title), html::exact(m.anchor),
      m.scale == Scale::log ? "log" : "linear");
  out += fmt::format("<text class=\"ct\" x=\"4\" y=\"18\">{}</text>", html::text(m.title));
  out += fmt::format("<text class=\"at\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", fmt1(left + grid / 2),
                     fmt1(32), html::text(m.column_title + " \u2192"));
  out += fmt::format("<text class=\"at\" x=\"12\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {0})\">{1}"
                     "</text>",
                     fmt1(top + grid / 2), html::text(m.row_title + " \u2192"));
  for (int i = 0; i < n; ++i) {
    const double c = top + (i + 0.5) * cell;
    out += fmt::format("<text class=\"tl\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", fmt1(left - 5),
                       fmt1(c + 3.5), html::text(m.labels[i]));
    const double cx = left + (i + 0.5) * cell;
    out += fmt::format("<text class=\"tl\" x=\"{0}\" y=\"{1}\" transform=\"rotate(-55 {0} {1})\">{2}</text>", fmt1(cx),
                       fmt1(top - 5), html::text(m.labels[i]));
  }
  const bool values = n <= 16 && cell >= 30;
  for (int r = 0; r < n && r < static_cast<int>(m.cells.size()); ++r) {
    for (int col = 0; col < n && col < static_cast<int>(m.cells[r].size()); ++col) {
      const Cell& cl = m.cells[r][col];
      const double x = left + col * cell, y = top + r * cell;
      std::string attrs;
      for (const auto& [k, v] : cl.data) attrs += fmt::format(" data-{}=\"{}\"", k, html::attr(v));
      const double g = cl.value ? goodness(m, *cl.value) : 0;
      const std::string fill = r == col ? "#ffffff" : cl.value ? ramp(g) : "#d9d9d9";
      out += fmt::format("<rect class=\"cell{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}>",
                         cl.flagged ? " flagged" : "", fmt1(x), fmt1(y), fmt1(cell), fmt1(cell), fill, attrs);
      out += cl.tip.empty() ? "</rect>" : "<title>" + html::text(cl.tip) + "</title></rect>";
      if (cl.value && values)
        out += fmt::format("<text class=\"cv\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{}</text>",
                           fmt1(x + cell / 2), fmt1(y + cell / 2 + 3.5), g > 0.55 ? "#111" : "#fff",
                           html::text(html::num(*cl.value)));
      if (cl.flagged)
        out += fmt::format("<text class=\"flag\" x=\"{}\" y=\"{}\">!</text>", fmt1(x + cell - 7), fmt1(y + 10));
    }
  }
  for (int k : m.crossed) {
    if (k < 0 || k >= n) continue;
    out += fmt::format("<rect class=\"crossed\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", fmt1(left),
                       fmt1(top + k * cell), fmt1(grid), fmt1(cell));
    out += fmt::format("<rect class=\"crossed\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", fmt1(left + k * cell),
                       fmt1(top), fmt1(cell), fmt1(grid));
  }
  out += scale_legend(m, left + grid + 14, top, std::min(grid, 180.0));
  out += "</svg>";
  out += fmt::format("<p class=\"caption\">Colour: each link against {}{}.</p>", html::text(m.anchor_text),
                     m.scale == Scale::log ? " on a log scale (brightest at or under it, darkest 16 times it or more)"
                                           : " (brightest at it or above, darkest at 0)");
  return out;
}

}  // namespace fb::report::svg
