// Line and point charts as inline SVG: axes with their ticks and grid, each
// series' spread band, line and points, reference lines, notes, and the
// legend as an HTML list under the chart (it wraps where the SVG cannot).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "fabricbench/report/svg.hpp"
#include "html_text.hpp"
#include "svg_parts.hpp"

namespace fb::report::svg {
namespace {

struct Box {
  double left = 66, right = 14, top = 30, bottom = 46;
};

// Maps data to pixels on one axis.
class Map {
 public:
  Map(const Axis& axis, double lo, double hi, double from_px, double to_px)
      : log_(axis.scale == Scale::log), lo_(t(lo)), hi_(t(hi)), from_(from_px), to_(to_px) {}
  double operator()(double v) const { return from_ + (t(v) - lo_) / (hi_ - lo_) * (to_ - from_); }
  bool inside(double v) const {
    if (log_ && !(v > 0)) return false;
    const double x = t(v);
    return x >= std::min(lo_, hi_) - 1e-9 && x <= std::max(lo_, hi_) + 1e-9;
  }

 private:
  double t(double v) const { return log_ ? std::log10(v) : v; }
  bool log_;
  double lo_, hi_, from_, to_;
};

bool usable(const Axis& axis, double v) { return std::isfinite(v) && (axis.scale == Scale::linear || v > 0); }

// The data's extent on each axis, bands and rules included.
struct Extent {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(const Axis& axis, double v) {
    if (!usable(axis, v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};


std::string data_attributes(const Attributes& data) {
  std::string out;
  for (const auto& [k, v] : data) out += fmt::format(" data-{}=\"{}\"", k, html::attr(v));
  return out;
}

void axes(std::string& out, const Chart& c, const Axis& axis, bool horizontal, const Map& map, double lo, double hi,
          const Box& box) {
  const double w = c.width, h = c.height;
  for (const Tick& t : ticks(axis, lo, hi)) {
    if (!map.inside(t.value)) continue;
    const double p = map(t.value);
    const char* cls = t.major ? "grid" : "grid minor";
    if (horizontal) {
      out += fmt::format("<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", cls, fmt1(p), fmt1(box.top),
                         fmt1(p), fmt1(h - box.bottom));
      out += fmt::format("<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", fmt1(p),
                         fmt1(h - box.bottom), fmt1(h - box.bottom + (t.major ? 5 : 3)));
      if (t.major)
        out += fmt::format("<text class=\"tl\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", fmt1(p),
                           fmt1(h - box.bottom + 16), html::text(t.label));
    } else {
      out += fmt::format("<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>", cls, fmt1(box.left), fmt1(p),
                         fmt1(w - box.right), fmt1(p));
      out += fmt::format("<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>", fmt1(box.left), fmt1(p),
                         fmt1(box.left - (t.major ? 5 : 3)));
      if (t.major)
        out += fmt::format("<text class=\"tl\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", fmt1(box.left - 7),
                           fmt1(p + 3.5), html::text(t.label));
    }
  }
  if (horizontal) {
    out += fmt::format("<text class=\"at\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                       fmt1(box.left + (w - box.left - box.right) / 2), fmt1(h - 8), html::text(axis.title));
  } else {
    const double y = box.top + (h - box.top - box.bottom) / 2;
    out += fmt::format("<text class=\"at\" x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}"
                       "</text>",
                       fmt1(y), html::text(axis.title));
  }
}

void series_svg(std::string& out, const Chart& c, const Series& s, const Map& mx, const Map& my) {
  if (!s.band.empty()) {
    std::string upper, lower;
    for (const auto& b : s.band) {
      if (!usable(c.x, b.x) || !usable(c.y, b.lo) || !usable(c.y, b.hi)) continue;
      upper += fmt::format("{},{} ", fmt1(mx(b.x)), fmt1(my(b.hi)));
      lower = fmt::format("{},{} ", fmt1(mx(b.x)), fmt1(my(b.lo))) + lower;
    }
    if (!upper.empty())
      out += fmt::format("<polygon class=\"band\" points=\"{}{}\" fill=\"{}\"/>", upper, lower, s.colour);
  }
  std::vector<const Point*> shown;
  for (const auto& p : s.points)
    if (usable(c.x, p.x) && usable(c.y, p.y)) shown.push_back(&p);
  if (s.line && shown.size() > 1) {
    std::string pts;
    for (const Point* p : shown) pts += fmt::format("{},{} ", fmt1(mx(p->x)), fmt1(my(p->y)));
    out += fmt::format("<polyline class=\"series\" points=\"{}\" stroke=\"{}\"{}/>", pts, s.colour,
                       s.dashed ? " stroke-dasharray=\"5 3\"" : "");
  }
  if (s.markers || shown.size() == 1)
    for (const Point* p : shown) {
      out += fmt::format("<circle class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"{}>", fmt1(mx(p->x)),
                         fmt1(my(p->y)), s.marker_size, s.colour, data_attributes(p->data));
      out += p->tip.empty() ? "</circle>" : "<title>" + html::text(p->tip) + "</title></circle>";
    }
}

std::string legend(const Chart& c) {
  std::string out = "<ul class=\"legend\">";
  for (const auto& s : c.series) {
    if (s.label.empty()) continue;
    out += fmt::format("<li><svg width=\"26\" height=\"10\" aria-hidden=\"true\"><line x1=\"1\" y1=\"5\" x2=\"25\" "
                       "y2=\"5\" stroke=\"{}\" stroke-width=\"2.2\"{}/>{}</svg>{}</li>",
                       s.colour, s.dashed ? " stroke-dasharray=\"5 3\"" : "",
                       s.markers ? fmt::format("<circle cx=\"13\" cy=\"5\" r=\"2.6\" fill=\"{}\"/>", s.colour) : "",
                       html::text(s.label));
  }
  for (const auto& r : c.rules)
    out += fmt::format("<li><svg width=\"26\" height=\"10\" aria-hidden=\"true\"><line x1=\"1\" y1=\"5\" x2=\"25\" "
                       "y2=\"5\" stroke=\"{}\" stroke-width=\"1.6\" stroke-dasharray=\"2 2\"/></svg>{}</li>",
                       r.colour, html::text(r.label));
  if (std::any_of(c.series.begin(), c.series.end(), [](const Series& s) { return !s.band.empty(); }))
    out += "<li><svg width=\"26\" height=\"10\" aria-hidden=\"true\"><rect x=\"1\" y=\"1\" width=\"24\" height=\"8\" "
           "fill=\"#888\" fill-opacity=\"0.25\"/></svg>shaded: spread over the timed iterations (min to max)</li>";
  return out + "</ul>";
}

}  // namespace

std::string render(const Chart& c) {
  Extent ex, ey;
  for (const auto& s : c.series) {
    for (const auto& p : s.points) {
      if (!usable(c.x, p.x) || !usable(c.y, p.y)) continue;
      ex.add(c.x, p.x);
      ey.add(c.y, p.y);
    }
    for (const auto& b : s.band) {
      ey.add(c.y, b.lo);
      ey.add(c.y, b.hi);
    }
  }
  for (const auto& r : c.rules) ey.add(c.y, r.y);
  const auto [x0, x1] = axis_range(c.x, ex.lo, ex.hi);
  const auto [y0, y1] = axis_range(c.y, ey.lo, ey.hi);
  const Box box;
  const Map mx(c.x, x0, x1, box.left, c.width - box.right);
  const Map my(c.y, y0, y1, c.height - box.bottom, box.top);
  std::string out = fmt::format(
      "<svg class=\"chart\" id=\"{0}\" viewBox=\"0 0 {1} {2}\" width=\"{1}\" height=\"{2}\" role=\"img\" "
      "aria-label=\"{3}\"><defs><clipPath id=\"{0}-clip\"><rect x=\"{4}\" y=\"{5}\" width=\"{6}\" height=\"{7}\"/>"
      "</clipPath></defs>",
      html::attr(c.id), c.width, c.height, html::attr(c.title), fmt1(box.left - 6), fmt1(box.top - 6),
      fmt1(c.width - box.left - box.right + 12), fmt1(c.height - box.top - box.bottom + 12));
  out += fmt::format("<text class=\"ct\" x=\"{}\" y=\"18\">{}</text>", fmt1(box.left), html::text(c.title));
  axes(out, c, c.x, true, mx, x0, x1, box);
  axes(out, c, c.y, false, my, y0, y1, box);
  out += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", fmt1(box.left),
                     fmt1(box.top), fmt1(c.width - box.left - box.right), fmt1(c.height - box.top - box.bottom));
  if (ex.lo > ex.hi) {
    out += fmt::format("<text class=\"tl\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">no figure to draw</text>",
                       c.width / 2, c.height / 2);
  }
  out += fmt::format("<g clip-path=\"url(#{}-clip)\">", html::attr(c.id));
  for (const auto& s : c.series) series_svg(out, c, s, mx, my);
  for (const auto& r : c.rules) {
    if (!usable(c.y, r.y)) continue;
    out += fmt::format("<line class=\"rule\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\" data-y=\"{4}\"/>",
                       fmt1(box.left), fmt1(c.width - box.right), fmt1(my(r.y)), r.colour, r.y);
    // At the left, where small messages sit far under any peak.
    out += fmt::format("<text class=\"rl\" x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>", fmt1(box.left + 4),
                       fmt1(my(r.y) - 4), r.colour, html::text(r.label));
  }
  for (const auto& n : c.notes) {
    if (!usable(c.x, n.x) || !usable(c.y, n.y)) continue;
    const double px = mx(n.x), py = my(n.y);
    out += fmt::format("<circle class=\"note\" cx=\"{}\" cy=\"{}\" r=\"7\"/>", fmt1(px), fmt1(py));
    const bool left = px > c.width * 0.7;
    out += fmt::format("<text class=\"nl\" x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>", fmt1(px + (left ? -10 : 10)),
                       fmt1(py - 9), left ? "end" : "start", html::text(n.text));
  }
  out += "</g></svg>";
  return out + legend(c);
}

}  // namespace fb::report::svg
