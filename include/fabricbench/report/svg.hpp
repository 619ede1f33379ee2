// Charts as inline SVG, drawn by our own code (no plotting library, no
// script, nothing fetched): line and point charts on real log or linear
// axes with their ticks, spread bands, reference lines and notes; and
// heatmaps whose colour scale is anchored at a stated reference. Every point
// and cell can carry data-* attributes, so a test can read the figures back
// from the page, and a <title> a browser shows on hover.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fb::report::svg {

enum class Scale { linear, log };
enum class TickFormat { number, bytes };  // bytes: powers of two as "4 KiB"

struct Axis {
  Axis() = default;
  explicit Axis(std::string title_, Scale scale_ = Scale::log, TickFormat format_ = TickFormat::number)
      : title(std::move(title_)), scale(scale_), format(format_) {}
  std::string title;  // with its unit: "busbw (GB/s)"
  Scale scale = Scale::log;
  TickFormat format = TickFormat::number;
  std::optional<double> lo, hi;  // forced ends; else from the data
};

struct Tick {
  double value = 0;
  std::string label;  // "" for a minor tick
  bool major = true;
};
// The ticks of an axis over [lo, hi] (data ends; log axes need lo > 0).
// Log: every power of ten (every power of two for bytes) as minor ticks,
// labelled ones at a step that keeps about ten labels; over less than two
// decades also 2 and 5 times each. Linear: 1, 2 or 5 times a power of ten.
std::vector<Tick> ticks(const Axis& axis, double lo, double hi);
// The ends the axis is drawn over: [lo, hi] widened to the outer labelled ticks.
std::pair<double, double> axis_range(const Axis& axis, double lo, double hi);

using Attributes = std::vector<std::pair<std::string, std::string>>;  // data-* names without "data-"

struct Point {
  double x = 0;
  double y = 0;
  std::string tip;   // hover text
  Attributes data;   // data-* attributes
};

struct Band {  // the spread at one x: lo..hi
  double x = 0;
  double lo = 0;
  double hi = 0;
};

struct Series {
  std::string label;   // what the line is, for the legend: "all_reduce out-of-place, float, 8 ranks"
  std::string colour;  // "#0072B2"
  bool dashed = false;
  bool line = true;
  bool markers = true;
  double marker_size = 2.6;
  std::vector<Point> points;
  std::vector<Band> band;  // drawn under the line, translucent
};

struct Rule {  // a horizontal reference line across the plot
  double y = 0;
  std::string label;  // "spec peak 63 GB/s (PCIe Gen5 x16)"
  std::string colour = "#C0392B";
};

struct Note {  // text at a point, with an arrow-free marker ring
  double x = 0;
  double y = 0;
  std::string text;
};

struct Chart {
  std::string id;  // unique in the page (clip paths)
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::vector<Rule> rules;
  std::vector<Note> notes;
  int width = 560;
  int height = 330;
};

// The chart as an <svg> element with its legend as an HTML list after it.
std::string render(const Chart& chart);

// ---- heatmap ---------------------------------------------------------------

struct Cell {
  std::optional<double> value;  // nullopt: not measured (grey)
  bool flagged = false;          // an outlier: outlined in red with "!"
  std::string tip;
  Attributes data;
};

// The colour of a cell is its value against `anchor`, the rate or time the
// cell is expected to reach, never the data's own minimum and maximum: so
// a uniformly slow fabric is uniformly dark instead of looking fine.
//   linear (bandwidth): value / anchor over [0, 1], higher is better;
//   log (latency): log2(value / anchor) over [0, 4], lower is better.
struct Heatmap {
  std::string id;
  std::string title;
  std::string row_title = "sender";
  std::string column_title = "receiver";
  std::vector<std::string> labels;       // one per row and column
  std::vector<std::vector<Cell>> cells;  // [row][column]
  Scale scale = Scale::linear;
  double anchor = 1;            // > 0
  std::string anchor_text;      // "1.25 GB/s expected: the NIC's spec peak"
  std::string unit;             // "GB/s", "us"
  std::vector<int> crossed;     // rows/columns of bad nodes, outlined
};

std::string render(const Heatmap& map);

// The palette's colour at t in [0, 1] (a perceptual dark-to-bright ramp,
// readable in grey and by colour-blind readers), "#rrggbb".
std::string ramp(double t);

}  // namespace fb::report::svg
