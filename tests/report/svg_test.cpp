// The SVG helper: real log axes and their ticks, points where a log scale
// puts them, and heatmap colours against their anchor rather than the data.
#include "fabricbench/report/svg.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>
#include <regex>

namespace fb::report::svg {
namespace {

std::vector<std::string> labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> out;
  for (const auto& t : ticks)
    if (t.major) out.push_back(t.label);
  return out;
}

bool has_tick(const std::vector<Tick>& ticks, double v) {
  for (const auto& t : ticks)
    if (std::abs(t.value - v) <= 1e-9 * v) return true;
  return false;
}

TEST(SvgTicks, SizesOnALogAxisTickEveryPowerOfTwoAndLabelAFew) {
  const Axis bytes{"size", Scale::log, TickFormat::bytes};
  const auto t = ticks(bytes, 8, 8.0 * (1ull << 30));
  for (double v = 8; v <= 8.0 * (1ull << 30); v *= 2) EXPECT_TRUE(has_tick(t, v)) << v;
  const auto l = labels(t);
  EXPECT_LE(l.size(), 10u);
  EXPECT_NE(std::find(l.begin(), l.end(), "1 KiB"), l.end());
  EXPECT_NE(std::find(l.begin(), l.end(), "1 MiB"), l.end());
  EXPECT_NE(std::find(l.begin(), l.end(), "1 GiB"), l.end());
  // The axis ends on labelled ticks around the data.
  const auto [lo, hi] = axis_range(bytes, 8, 8.0 * (1ull << 30));
  EXPECT_LE(lo, 8);
  EXPECT_GE(hi, 8.0 * (1ull << 30));
  // (lo copied into the lambda: clang 14 cannot capture a structured binding.)
  EXPECT_TRUE(std::any_of(t.begin(), t.end(), [low = lo](const Tick& k) { return k.major && k.value == low; }));
}

TEST(SvgTicks, WideLogAxisLabelsDecadesWithMinorTicksBetween) {
  const Axis a{"GB/s"};
  const auto t = ticks(a, 0.004, 2000);
  EXPECT_EQ(labels(t), (std::vector<std::string>{"0.001", "0.01", "0.1", "1", "10", "100", "1000", "10000"}));
  EXPECT_TRUE(has_tick(t, 300));  // minor: 3 x 100
  const auto wide = labels(ticks(a, 1e-7, 1e9));  // 16 decades: every other one labelled
  EXPECT_LE(wide.size(), 10u);
  EXPECT_NE(std::find(wide.begin(), wide.end(), "1e-6"), wide.end());
  EXPECT_NE(std::find(wide.begin(), wide.end(), "1e6"), wide.end());
}

TEST(SvgTicks, NarrowLogAxisLabelsOneTwoFive) {
  EXPECT_EQ(labels(ticks(Axis{"us"}, 3, 40)), (std::vector<std::string>{"1", "2", "5", "10", "20", "50", "100"}));
}

// A chart with nothing usable to plot (every y zero on a log axis) passes
// its empty extent, +inf to -inf; the sizes of a huge one pass values whose
// short-axis padding overflows. Both once reached the tick loops as
// exponents cast from infinity (undefined; "0" ticks in practice).
TEST(SvgTicks, AnEmptyOrHugeExtentStillGivesAFiniteAxis) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const Axis& a : {Axis{"GB/s"}, Axis{"size", Scale::log, TickFormat::bytes}, Axis{"hours", Scale::linear}})
    for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{{inf, -inf}, {1e308, 1e308}, {-inf, inf}}) {
      const auto t = ticks(a, lo, hi);
      EXPECT_FALSE(t.empty()) << a.title << " " << lo << ".." << hi;
      EXPECT_LE(t.size(), 200u) << a.title << " " << lo << ".." << hi;
      for (const Tick& k : t) {
        EXPECT_TRUE(std::isfinite(k.value)) << a.title << " " << lo << ".." << hi;
        if (a.scale == Scale::log) {
          EXPECT_GT(k.value, 0) << a.title << " " << lo << ".." << hi;
        }
      }
      const auto [r0, r1] = axis_range(a, lo, hi);
      EXPECT_TRUE(std::isfinite(r0) && std::isfinite(r1) && r1 > r0) << a.title << " " << r0 << ".." << r1;
    }
}

TEST(SvgTicks, LinearAxisEndsOnATickPastTheData) {
  const Axis a{"hours", Scale::linear};
  EXPECT_EQ(labels(ticks(a, 0, 115)), (std::vector<std::string>{"0", "20", "40", "60", "80", "100", "120"}));
}

TEST(SvgChart, PointsSitWhereTheLogScalePutsThem) {
  Chart c;
  c.id = "t";
  c.x = Axis{"x"};
  c.y = Axis{"y"};
  c.x.lo = 1;
  c.x.hi = 10000;
  c.y.lo = 1;
  c.y.hi = 100;
  Series s;
  s.label = "a line";
  s.colour = "#000000";
  s.points = {{10, 10, "", {{"v", "10"}}}, {100, 10, "", {{"v", "100"}}}, {1000, 10, "", {{"v", "1000"}}}};
  c.series.push_back(s);
  c.rules.push_back({50, "peak 50", "#ff0000"});
  const std::string svg = render(c);
  std::vector<double> cx;
  const std::regex circle(R"re(<circle class="pt" cx="([0-9.]+)")re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it) cx.push_back(std::stod((*it)[1]));
  ASSERT_EQ(cx.size(), 3u);
  EXPECT_NEAR(cx[1] - cx[0], cx[2] - cx[1], 0.2) << "each decade the same width";
  EXPECT_NE(svg.find("data-v=\"100\""), std::string::npos);
  EXPECT_NE(svg.find("data-y=\"50\""), std::string::npos);
  EXPECT_NE(svg.find(">a line</li>"), std::string::npos) << "the legend says what the line is";
  EXPECT_NE(svg.find(">peak 50</li>"), std::string::npos);
}

TEST(SvgHeatmap, ColourIsTheValueAgainstTheAnchorNotAgainstTheOtherCells) {
  const auto fills = [](const Heatmap& m) {
    std::vector<std::string> out;
    const std::regex cell(R"re(<rect class="cell[^"]*" [^>]*fill="(#[0-9a-f]{6})")re");
    const std::string svg = render(m);
    for (std::sregex_iterator it(svg.begin(), svg.end(), cell), end; it != end; ++it) out.push_back((*it)[1]);
    return out;
  };
  // The links' cells (the diagonal has no value and stays white): six of them, so the loops below cannot pass
  // on a heatmap that drew none.
  const auto coloured = [&](const Heatmap& m) {
    std::vector<std::string> out;
    for (const auto& f : fills(m))
      if (f != "#ffffff") out.push_back(f);
    return out;
  };
  Heatmap slow;
  slow.id = "h";
  slow.labels = {"a", "b", "c"};
  slow.anchor = 50;
  slow.cells.assign(3, std::vector<Cell>(3));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      if (r != c) slow.cells[r][c].value = 5.0;  // every link at a tenth of the rate
  const auto dark = coloured(slow);
  ASSERT_EQ(dark.size(), 6u);
  for (const auto& f : dark) EXPECT_EQ(f, ramp(0.1)) << "a uniformly slow fabric is uniformly dark";
  EXPECT_NE(ramp(0.1), ramp(1.0));
  Heatmap latency = slow;
  latency.scale = Scale::log;
  latency.anchor = 2;
  for (auto& row : latency.cells)
    for (auto& c : row)
      if (c.value) c.value = 8.0;  // 4x the anchor: two of the scale's four doublings
  const auto mid = coloured(latency);
  ASSERT_EQ(mid.size(), 6u);
  for (const auto& f : mid) EXPECT_EQ(f, ramp(0.5));
}

}  // namespace
}  // namespace fb::report::svg
