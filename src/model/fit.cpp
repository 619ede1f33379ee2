#include "fabricbench/model/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <system_error>
#include <tuple>

#include "fabricbench/core/errors.hpp"
#include "fabricbench/model/units.hpp"

namespace fb::model {
namespace {


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

namespace {

struct Weighted {
  double sum_w = 0, sum = 0;
  void add(double value, double weight) {
    sum += weight * value;
    sum_w += weight;
  }
  double mean() const { return sum_w > 0 ? sum / sum_w : 0.0; }
};

double rms_over(const Fit& fit, std::span<const FitPoint> points) {
  double sum_sq = 0;
  for (const auto& p : points) {
    const double rel = (fit.time_us(p.bytes) - p.time_us) / p.time_us;
    sum_sq += rel * rel;
  }
  return points.empty() ? 0.0 : std::sqrt(sum_sq / static_cast<double>(points.size()));
}

// gamma = 1/beta in us per byte through alpha on relative error:
// minimise sum(((alpha + gamma x - T) / T)^2) over gamma.
double gamma_through(double alpha, std::span<const FitPoint> large) {
  double num = 0, den = 0;
  for (const auto& p : large) {
    const double w = 1.0 / (p.time_us * p.time_us);
    num += w * p.bytes * (p.time_us - alpha);
    den += w * p.bytes * p.bytes;
  }
  return den > 0 ? num / den : 0.0;
}

}  // namespace

Fit fit_alpha_beta(std::span<const FitPoint> points) {
  Fit fit;
  std::vector<FitPoint> usable;
  for (const auto& p : points)
    if (p.time_us > 0 && p.bytes >= 0 && std::isfinite(p.time_us) && std::isfinite(p.bytes)) usable.push_back(p);
  std::sort(usable.begin(), usable.end(), [](const FitPoint& a, const FitPoint& b) { return a.bytes < b.bytes; });
  fit.points = usable.size();
  if (usable.empty()) return fit;
  const std::size_t n = usable.size(), quarter = std::max<std::size_t>(1, n / 4);
  const std::span<const FitPoint> small(usable.data(), quarter);
  const std::span<const FitPoint> large(usable.data() + (n - quarter), quarter);
  const bool sizes_differ = usable.back().bytes > usable.front().bytes;
  double alpha = 0, gamma = 0;
  for (const auto& p : small) alpha += p.time_us / static_cast<double>(small.size());
  // Alternate until neither moves (each pass shrinks the coupling between
  // the two ends by the small sizes' bandwidth share).
  for (int pass = 0; pass < 100 && sizes_differ; ++pass) {
    const double before = alpha;
    gamma = std::max(0.0, gamma_through(alpha, large));
    Weighted a;
    for (const auto& p : small) a.add(p.time_us - gamma * p.bytes, 1.0 / (p.time_us * p.time_us));
    alpha = std::max(0.0, a.mean());
    if (std::abs(alpha - before) <= 1e-13 * std::max(1.0, alpha)) break;
  }
  if (sizes_differ) gamma = std::max(0.0, gamma_through(alpha, large));
  if (gamma <= 0) {  // flat or falling curve: latency only
    Weighted a;
    for (const auto& p : usable) a.add(p.time_us, 1.0 / (p.time_us * p.time_us));
    alpha = a.mean();
    gamma = 0;
  }
  fit.alpha_us = alpha;
  fit.beta_gbps = gamma > 0 ? 1.0 / gamma / kBytesPerUsPerGbps : 0.0;
  fit.n_half_bytes = fit.alpha_us * fit.beta_gbps * kBytesPerUsPerGbps;
  add_errors(fit, usable);
  fit.alpha_points = small.size();
  fit.beta_points = large.size();
  fit.alpha_rms_rel_error = rms_over(fit, small);
  fit.beta_rms_rel_error = rms_over(fit, large);
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

double Curve::gbps_at(std::size_t i) const {
  if (i >= points.size()) return fit.beta_gbps;
  const FitPoint& p = points[i];
  const double transfer_us = p.time_us - std::min(fit.alpha_us, p.time_us);
  return transfer_us > 0 ? p.bytes / transfer_us / kBytesPerUsPerGbps : fit.beta_gbps;
}

std::size_t Curve::priced_point() const {
  if (cliff) return cliff->at - 1;
  return points.empty() ? 0 : points.size() - 1;
}

namespace {

std::optional<Cliff> cliff_of(const std::vector<FitPoint>& points) {
  std::vector<BandwidthPoint> bw;  // algbw: busbw's ratios within one curve are the same
  for (const auto& p : points)
    if (p.time_us > 0) bw.push_back({static_cast<std::uint64_t>(p.bytes), p.bytes / p.time_us, p.time_us});
  return bw.size() == points.size() ? find_cliff(bw) : std::nullopt;
}

}  // namespace

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
    Curve c{
        std::get<0>(key), std::get<1>(key), std::get<4>(key), std::get<2>(key), std::get<3>(key), in_place, {}, {}, {}};
    for (const auto& [bytes, times] : by_placement.at(in_place)) {
      double sum = 0;  // the same size twice (two sweeps in one file): their mean
      for (double t : times) sum += t;
      c.points.push_back({bytes, sum / static_cast<double>(times.size())});
    }
    c.fit = fit_alpha_beta(c.points);
    c.cliff = cliff_of(c.points);
    curves.push_back(std::move(c));
  }
  return curves;
}

Results load_results(const std::string& path) {
  try {
    Results r = read_results(path);
    refuse_simulated(r, path);
    return r;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
}

}  // namespace fb::model
