// Axis ticks: real log axes (every power of ten, or of two for sizes, as a
// tick; labels at a step that keeps them apart) and 1-2-5 linear ones.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "fabricbench/core/sizes.hpp"
#include "fabricbench/report/svg.hpp"

namespace fb::report::svg {
namespace {

// "0.01", "250", "10000", "1e+06": short, and never "1.0000000002".
std::string number_label(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1 && a < 1e5 && v == std::round(v)) return fmt::format("{:.0f}", v);
  if (a >= 1e-3 && a < 1e5) return fmt::format("{:.4g}", v);
  std::string e = fmt::format("{:.0e}", v);  // "1e+06" -> "1e6", "1e-05" -> "1e-5"
  for (const auto& [from, to] : {std::pair{"e+0", "e"}, std::pair{"e+", "e"}, std::pair{"e-0", "e-"}})
    if (const auto at = e.find(from); at != std::string::npos) {
      e.replace(at, std::string_view(from).size(), to);
      break;
    }
  return e;
}

// Sizes past what a 64-bit count holds (an axis padded around a huge value)
// as plain numbers of bytes.
std::string bytes_label(double v) {
  if (!(v >= 0 && v < 0x1p63)) return number_label(v) + " B";
  return format_bytes(static_cast<std::uint64_t>(std::llround(v)));
}

std::string label(const Axis& axis, double v) {
  return axis.format == TickFormat::bytes ? bytes_label(v) : number_label(v);
}

// Powers of `base` from base^lo to base^hi, labelled every `step` exponents.
std::vector<Tick> power_ticks(const Axis& axis, double base, int lo, int hi, int step) {
  // From the labelled power at or below the data to the one at or above it.
  lo = static_cast<int>(std::floor(static_cast<double>(lo) / step)) * step;
  hi = static_cast<int>(std::ceil(static_cast<double>(hi) / step)) * step;
  std::vector<Tick> out;
  for (int e = lo; e <= hi; ++e) {
    const double v = std::pow(base, e);
    const bool major = ((e % step) + step) % step == 0;
    out.push_back({v, major ? label(axis, v) : std::string(), major});
  }
  return out;
}

int log_step(int span, std::initializer_list<int> steps) {
  for (int s : steps)
    if (span / s <= 9) return s;
  return *(steps.end() - 1);
}

std::vector<Tick> log_ticks(const Axis& axis, double lo, double hi) {
  if (axis.format == TickFormat::bytes) {
    const int a = static_cast<int>(std::floor(std::log2(lo) + 1e-9));
    const int b = static_cast<int>(std::ceil(std::log2(hi) - 1e-9));
    return power_ticks(axis, 2.0, a, std::max(b, a + 1), log_step(b - a, {1, 2, 5, 10, 20}));
  }
  const int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int b = std::max(static_cast<int>(std::ceil(std::log10(hi) - 1e-9)), a + 1);
  std::vector<Tick> out;
  if (b - a <= 2) {
    // Narrow: 1, 2 and 5 labelled in each decade, the other digits as minor ticks.
    for (int e = a; e <= b; ++e)
      for (int d = 1; d <= 9; ++d) {
        const double v = d * std::pow(10.0, e);
        if (e == b && d > 1) break;
        const bool major = d == 1 || d == 2 || d == 5;
        out.push_back({v, major ? label(axis, v) : std::string(), major});
      }
    return out;
  }
  const int step = log_step(b - a, {1, 2, 3, 5, 10});
  for (const Tick& t : power_ticks(axis, 10.0, a, b, step)) {
    out.push_back(t);
    if (b - a <= 8 && t.value < std::pow(10.0, b))
      for (int d = 2; d <= 9; ++d) out.push_back({d * t.value, "", false});
  }
  return out;
}

double nice_step(double span) {
  const double raw = span / 6;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

std::vector<Tick> linear_ticks(const Axis& axis, double lo, double hi) {
  const double step = nice_step(hi - lo);
  std::vector<Tick> out;
  // One tick at or past each end, so the axis ends on labelled values.
  for (double v = std::floor(lo / step) * step; v < hi + step * (1 - 1e-6); v += step) {
    const double snapped = std::abs(v) < step * 1e-9 ? 0.0 : v;
    out.push_back({snapped, label(axis, snapped), true});
  }
  return out;
}

std::pair<double, double> sane(const Axis& axis, double lo, double hi) {
  if (axis.lo) lo = *axis.lo;
  if (axis.hi) hi = *axis.hi;
  // A chart with nothing to plot brings its empty extent (+inf to -inf): an
  // axis around the finite end, else a default one. Ends are kept where a
  // short axis's padding cannot overflow, and a log axis's above zero, so
  // every exponent below comes from a finite logarithm.
  const bool log = axis.scale == Scale::log;
  constexpr double kLargest = 1e300;
  if (!std::isfinite(lo)) lo = std::isfinite(hi) ? hi : (log ? 1 : 0);
  if (!std::isfinite(hi)) hi = lo;
  lo = std::clamp(lo, log ? 0.0 : -kLargest, kLargest);
  hi = std::clamp(hi, log ? 0.0 : -kLargest, kLargest);
  if (log) {
    if (lo > 0 && lo < 1 / kLargest) lo = 1 / kLargest;
    if (!(lo > 0)) lo = hi > 0 ? hi / 10 : 1;
    if (!(hi > lo)) {  // one value: in the middle of a short axis
      lo = lo / 4;
      hi = lo * 16;
    }
  } else if (!(hi > lo)) {
    hi = lo + (lo == 0 ? 1 : std::abs(lo));
  }
  return {lo, hi};
}

}  // namespace

std::vector<Tick> ticks(const Axis& axis, double lo, double hi) {
  std::tie(lo, hi) = sane(axis, lo, hi);
  return axis.scale == Scale::log ? log_ticks(axis, lo, hi) : linear_ticks(axis, lo, hi);
}

std::pair<double, double> axis_range(const Axis& axis, double lo, double hi) {
  std::tie(lo, hi) = sane(axis, lo, hi);
  // A linear axis keeps the extreme points off its frame.
  if (axis.scale == Scale::linear) {
    const double pad = 0.03 * (hi - lo);
    if (!axis.lo) lo -= pad;
    if (!axis.hi) hi += pad;
  }
  if (axis.lo && axis.hi) return {lo, hi};
  const auto t = ticks(axis, lo, hi);
  double a = lo, b = hi;
  // Widen to the labelled ticks around the data, so each end is a read-off value.
  for (const auto& k : t)
    if (k.major && k.value <= lo) a = k.value;
  for (auto it = t.rbegin(); it != t.rend(); ++it)
    if (it->major && it->value >= hi) b = it->value;
  if (axis.lo) a = lo;
  if (axis.hi) b = hi;
  return {a, b};
}

}  // namespace fb::report::svg
