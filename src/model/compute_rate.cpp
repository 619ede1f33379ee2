#include "compute_rate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fabricbench/model/gemm_shapes.hpp"

namespace fb::model::detail {
namespace {

double peak(const Workload& w, const GpuPreset& g) { return w.dtype == "fp16" ? g.fp16_tflops : g.bf16_tflops; }

// The layer's products priced one by one: a shape the record measured at its
// own rate, any other from the curve at its size. The layer's GEMM rate is
// its FLOPs over the sum of the products' times.
struct ShapePricing {
  double tflops = 0;
  std::size_t shapes = 0;
  std::size_t measured = 0;
};

ShapePricing price_shapes(const Workload& w) {
  ShapePricing p;
  double flops = 0, seconds = 0;
  for (const GemmShape& s : layer_gemm_shapes(w)) {
    double rate = 0;
    for (const auto& m : w.gemm.shapes)
      if (m.m == s.m && m.n == s.n && m.k == s.k) rate = m.tflops;
    if (rate > 0) ++p.measured;
    if (rate <= 0) rate = gemm_tflops(w.gemm, std::cbrt(s.flops() / 2));
    flops += s.flops();
    seconds += s.flops() / (rate * 1e12);
    ++p.shapes;
  }
  p.tflops = flops / seconds / 1e12;
  return p;
}

}  // namespace

double gemm_size(const Workload& w) {
  if (w.gemm.size > 0) return w.gemm.size;
  const double m = static_cast<double>(w.micro_batch) * w.seq_len;
  const double n = 4.0 * w.hidden / w.tp;
  return std::cbrt(m * n * w.hidden);
}

double gemm_tflops(const GemmCurve& c, double size) {
  const auto& pts = c.points;
  if (size <= pts.front().first) return pts.front().second;
  if (size >= pts.back().first) return pts.back().second;
  const auto hi = std::lower_bound(pts.begin(), pts.end(), size,
                                   [](const std::pair<double, double>& p, double s) { return p.first < s; });
  const auto lo = std::prev(hi);
  const double t = std::log(size / lo->first) / std::log(hi->first / lo->first);
  return std::exp(std::log(lo->second) + t * (std::log(hi->second) - std::log(lo->second)));
}

ComputeRate compute_rate(const Workload& w, const GpuPreset& gpu, const Presets& presets, double hardware_over_model) {
  ComputeRate r;
  const double here = peak(w, gpu);
  if (w.mfu > 0) {
    r.tflops = w.mfu * here * hardware_over_model;
    r.how = fmt::format("compute: MFU {:.1f}% of {}'s {:.0f} TFLOP/s {} peak = {:.4g} TFLOP/s of hardware FLOPs",
                        100 * w.mfu, gpu.name, here, w.dtype, r.tflops);
    return r;
  }
  const GpuPreset& measured_on = presets.gpu(w.compute_gpu, "workload: cluster: gpu");
  const double scale = here / peak(w, measured_on);
  const std::string moved =
      measured_on.name == gpu.name ? "" : fmt::format(", scaled by peak {:.0f}/{:.0f} from {}", here,
                                                      peak(w, measured_on), measured_on.name);
  if (w.tflops > 0) {
    r.tflops = w.tflops * scale;
    r.how = fmt::format("compute: {:.4g} TFLOP/s achieved per GPU (stated{})", r.tflops, moved);
    return r;
  }
  // A record prices a layer's products one by one: each at its own shape
  // where `gemm --shapes-of` measured it, else from the record's curve at its
  // size. A stated curve, or a stated gemm_size, prices one size.
  if (w.transformer() && w.gemm.size <= 0 && w.gemm.source != "stated" && w.hidden % w.tp == 0) {
    const ShapePricing p = price_shapes(w);
    r.tflops = w.gemm.of_gemm * p.tflops * scale;
    const std::string measured =
        p.measured == p.shapes
            ? fmt::format("each measured at its own shape in {}", w.gemm.source)
            : fmt::format("{} of them measured at their own shape in {}, the rest read from its curve by size",
                          p.measured, w.gemm.source);
    r.how = fmt::format(
        "compute: {:.0f}% of the GEMM rate of a layer's {} products ({:.4g} TFLOP/s; {}{}) = {:.4g} "
        "TFLOP/s",
        100 * w.gemm.of_gemm, p.shapes, p.tflops, measured, moved, r.tflops);
    return r;
  }
  const double size = gemm_size(w);
  const double gemm = gemm_tflops(w.gemm, size);
  r.tflops = w.gemm.of_gemm * gemm * scale;
  const bool inside = size >= w.gemm.points.front().first && size <= w.gemm.points.back().first;
  r.how = fmt::format("compute: {:.0f}% of the GEMM rate at size {:.0f} ({:.4g} TFLOP/s, {} curve {}{}{}) = {:.4g} "
                      "TFLOP/s",
                      100 * w.gemm.of_gemm, size, gemm, w.gemm.source == "stated" ? "stated" : "measured",
                      w.gemm.source == "stated" ? "" : w.gemm.source, inside ? "" : ", outside it: its edge", moved,
                      r.tflops);
  return r;
}

}  // namespace fb::model::detail
