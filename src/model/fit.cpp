#include "fabricbench/model/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace fb::model {
namespace {

constexpr double kBytesPerUsPerGbps = 1e3;  // 1 GB/s = 1e9 B/s = 1e3 B/us

void add_errors(Fit& fit, std::span<const FitPoint> points) {
  double sum_sq = 0;
  for (const auto& p : points) {
    const double rel = std::abs(fit.time_us(p.bytes) - p.time_us) / p.time_us;
    sum_sq += rel * rel;
    fit.max_rel_error = std::max(fit.max_rel_error, rel);
  }
  fit.rms_rel_error = points.empty() ? 0 : std::sqrt(sum_sq / static_cast<double>(points.size()));
}

}  // namespace

double Fit::time_us(double bytes) const {
  return alpha_us + (beta_gbps > 0 ? bytes / (beta_gbps * kBytesPerUsPerGbps) : 0.0);
}

Fit fit_alpha_beta(std::span<const FitPoint> points) {
  // Minimise sum(((alpha + gamma*x - T) / T)^2), gamma = 1/beta: weighted
  // linear least squares with w = 1/T^2. x is scaled to [0, 1] for conditioning.
  Fit fit;
  double x_max = 0;
  std::vector<FitPoint> usable;
  for (const auto& p : points)
    if (p.time_us > 0 && p.bytes >= 0 && std::isfinite(p.time_us)) {
      usable.push_back(p);
      x_max = std::max(x_max, p.bytes);
    }
  fit.points = usable.size();
  if (usable.empty()) return fit;
  double sw = 0, swx = 0, swxx = 0, swy = 0, swxy = 0;
  for (const auto& p : usable) {
    const double w = 1.0 / (p.time_us * p.time_us);
    const double x = x_max > 0 ? p.bytes / x_max : 0.0;
    sw += w;
    swx += w * x;
    swxx += w * x * x;
    swy += w * p.time_us;
    swxy += w * x * p.time_us;
  }
  const double det = sw * swxx - swx * swx;
  double alpha = swy / sw;
  double gamma = 0;  // us per scaled byte
  if (det > 1e-12 * sw * swxx) {
    alpha = (swxx * swy - swx * swxy) / det;
    gamma = (sw * swxy - swx * swy) / det;
    if (alpha < 0) {  // no negative latency: refit through the origin
      alpha = 0;
      gamma = swxy / swxx;
    }
    if (gamma <= 0) {  // flat or falling curve: latency only
      gamma = 0;
      alpha = swy / sw;
    }
  }
  fit.alpha_us = alpha;
  fit.beta_gbps = gamma > 0 ? x_max / gamma / kBytesPerUsPerGbps : 0.0;
  fit.n_half_bytes = fit.alpha_us * fit.beta_gbps * kBytesPerUsPerGbps;
  add_errors(fit, usable);
  return fit;
}

bool Curve::covers(double bytes) const {
  return !points.empty() && bytes >= points.front().bytes && bytes <= points.back().bytes;
}

double Curve::time_us(double bytes) const {
  if (points.empty()) return fit.time_us(bytes);
  if (!covers(bytes)) {
    const FitPoint& edge = bytes < points.front().bytes ? points.front() : points.back();
    const double alpha = std::min(fit.alpha_us, edge.time_us);
    if (edge.bytes <= 0) return edge.time_us;
    return alpha + (edge.time_us - alpha) * bytes / edge.bytes;
  }
  const auto hi = std::lower_bound(points.begin(), points.end(), bytes,
                                   [](const FitPoint& p, double b) { return p.bytes < b; });
  if (hi->bytes == bytes || hi == points.begin()) return hi->time_us;
  const auto lo = std::prev(hi);
  if (lo->bytes <= 0) {  // a 0-byte row: interpolate linearly
    const double t = (bytes - lo->bytes) / (hi->bytes - lo->bytes);
    return lo->time_us + t * (hi->time_us - lo->time_us);
  }
  // Straight line between the two neighbours on log-log axes, where a sweep
  // by powers of two is evenly spaced.
  const double t = std::log(bytes / lo->bytes) / std::log(hi->bytes / lo->bytes);
  return std::exp(std::log(lo->time_us) + t * (std::log(hi->time_us) - std::log(lo->time_us)));
}

double Curve::tail_gbps() const {
  if (points.empty()) return fit.beta_gbps;
  const FitPoint& last = points.back();
  const double transfer_us = last.time_us - std::min(fit.alpha_us, last.time_us);
  return transfer_us > 0 ? last.bytes / transfer_us / kBytesPerUsPerGbps : fit.beta_gbps;
}

std::vector<Curve> fit_curves(const Results& results) {
  using Key = std::tuple<std::string, std::string, int, int, std::string>;
  std::map<Key, std::map<bool, std::map<double, std::vector<double>>>> rows;  // key -> in_place -> bytes -> times
  std::vector<Key> order;
  for (const auto& m : results.measurements) {
    const Key key{m.op, m.scope, m.nranks, m.groups, m.dtype};
    if (!rows.contains(key)) order.push_back(key);
    rows[key][m.in_place][static_cast<double>(m.bytes)].push_back(m.time.median_us);
  }
  std::vector<Curve> curves;
  for (const auto& key : order) {
    const auto& by_placement = rows[key];
    const bool in_place = !by_placement.contains(false);
    Curve c{std::get<0>(key), std::get<1>(key), std::get<4>(key), std::get<2>(key), std::get<3>(key), in_place, {}, {}};
    for (const auto& [bytes, times] : by_placement.at(in_place)) {
      double sum = 0;  // the same size twice (two sweeps in one file): their mean
      for (double t : times) sum += t;
      c.points.push_back({bytes, sum / static_cast<double>(times.size())});
    }
    c.fit = fit_alpha_beta(c.points);
    curves.push_back(std::move(c));
  }
  return curves;
}

}  // namespace fb::model
