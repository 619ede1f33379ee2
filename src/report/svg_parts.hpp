// What the SVG drawings (svg_chart.cpp, svg_heatmap.cpp) share.
#pragma once

#include <fmt/format.h>

#include <string>

namespace fb::report::svg {

// A coordinate or length in a drawing: a tenth of a pixel is finer than any
// screen shows, and keeps the page small.
inline std::string fmt1(double v) { return fmt::format("{:.1f}", v); }

}  // namespace fb::report::svg
