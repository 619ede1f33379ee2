#include "compute_rate.hpp"

#include "attention.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fabricbench/core/errors.hpp"
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
  std::vector<double> rates;  // each shape's, from the record or the curve
};

ShapePricing price_shapes(const Workload& w, const GemmCurve& curve) {
  ShapePricing p;
  double flops = 0, seconds = 0;
  for (const GemmShape& s : layer_gemm_shapes(w)) {
    double rate = 0;
    for (const auto& m : curve.shapes)
      if (m.m == s.m && m.n == s.n && m.k == s.k) rate = m.tflops;
    if (rate > 0) ++p.measured;
    if (rate <= 0) rate = gemm_tflops(curve, std::cbrt(s.flops() / 2));
    flops += s.flops();
    seconds += s.flops() / (rate * 1e12);
    ++p.shapes;
    p.rates.push_back(rate);
  }
  p.tflops = flops / seconds / 1e12;
  return p;
}

// The GPU the workload's tflops or GEMM record was measured on: the record's
// own GPU where its NVML name maps to a preset, else the workload's cluster GPU.
const GpuPreset& measured_gpu(const Workload& w, const Presets& presets) {
  if (!w.gemm.measured_gpu.empty())
    if (const GpuPreset* p = gpu_by_nvml_name(presets, w.gemm.measured_gpu)) return *p;
  return presets.gpu(w.compute_gpu, "workload: cluster: gpu");
}

ComputeRate priced(const Workload& w, const GemmCurve& curve, double scale, const std::string& note,
                   const char* source);

}  // namespace

double gemm_size(const Workload& w) {
  if (w.gemm.size > 0) return w.gemm.size;
  const double m = static_cast<double>(w.micro_batch) * w.seq_len;
  const double n = 4.0 * w.hidden / w.tp;
  return std::cbrt(m * n * w.hidden);
}

double gemm_tflops(const GemmCurve& c, double size) { return curve_tflops(c.points, size); }

namespace {

// A curve's rate for the workload: a layer's products one by one each at its
// own shape where `gemm --shapes-of` measured it, else from the curve at its
// size; a stated curve, or a stated gemm_size, prices one size.
ComputeRate priced(const Workload& w, const GemmCurve& curve, double scale, const std::string& note,
                   const char* source) {
  ComputeRate r;
  r.source = source;
  const bool preset = std::string_view(source) == "preset_curve";
  if (w.transformer() && w.gemm.size <= 0 && (curve.source != "stated" || preset) && w.hidden % w.tp == 0) {
    const ShapePricing p = price_shapes(w, curve);
    r.tflops = curve.of_gemm * p.tflops * scale;
    for (const double rate : p.rates) r.shape_tflops.push_back(curve.of_gemm * rate * scale);
    const std::string measured = preset ? fmt::format("each read from {} by size", curve.source)
                                 : p.measured == p.shapes
                                     ? fmt::format("each measured at its own shape in {}", curve.source)
                                     : fmt::format(
                                           "{} of them measured at their own shape in {}, the rest read from its "
                                           "curve by size",
                                           p.measured, curve.source);
    r.how = fmt::format(
        "compute: {:.0f}% of the GEMM rate of a layer's {} products ({:.4g} TFLOP/s; {}{}) = {:.4g} "
        "TFLOP/s",
        100 * curve.of_gemm, p.shapes, p.tflops, measured, note, r.tflops);
    return r;
  }
  const double size = gemm_size(w);
  const double gemm = gemm_tflops(curve, size);
  r.tflops = curve.of_gemm * gemm * scale;
  const bool inside = size >= curve.points.front().first && size <= curve.points.back().first;
  r.how = fmt::format(
      "compute: {:.0f}% of the GEMM rate at size {:.0f} ({:.4g} TFLOP/s, {}{}{}) = {:.4g} "
      "TFLOP/s",
      100 * curve.of_gemm, size, gemm,
      preset                     ? curve.source
      : curve.source == "stated" ? std::string("stated curve")
                                 : "measured curve " + curve.source,
      inside ? "" : ", outside it: its edge", note, r.tflops);
  return r;
}

}  // namespace

ComputeRate compute_rate(const Workload& w, const GpuPreset& gpu, const Presets& presets, double hardware_over_model) {
  ComputeRate r;
  const double here = peak(w, gpu);
  if (w.mfu > 0) {
    r.tflops = w.mfu * here * hardware_over_model;
    r.source = "mfu";
    r.how = fmt::format("compute: MFU {:.1f}% of {}'s {:.0f} TFLOP/s {} peak = {:.4g} TFLOP/s of hardware FLOPs",
                        100 * w.mfu, gpu.name, here, w.dtype, r.tflops);
    return r;
  }
  const GpuPreset& measured_on = measured_gpu(w, presets);
  const double scale = here / peak(w, measured_on);
  const std::string moved =
      measured_on.name == gpu.name ? "" : fmt::format(", scaled by peak {:.0f}/{:.0f} from {}", here,
                                                      peak(w, measured_on), measured_on.name);
  if (w.tflops > 0) {
    r.tflops = w.tflops * scale;
    r.source = "stated_tflops";
    r.how = fmt::format("compute: {:.4g} TFLOP/s achieved per GPU (stated{})", r.tflops, moved);
    return r;
  }
  // The curve this GPU is priced from: the workload's own on the GPU its
  // record was measured on and on the workload's own cluster GPU (scaled by
  // peak, as the user chose it: a step keeps its result); this GPU's preset
  // curve where the workload asks for it, or where a quote prices another
  // GPU that has one; else the workload's, scaled by peak.
  const bool other_gpu = measured_on.name != gpu.name && gpu.name != w.compute_gpu;
  const bool use_preset = w.gemm.preset() || (other_gpu && !gpu.gemm_curve.empty() && w.gemm.source != "stated");
  if (use_preset) {
    if (gpu.gemm_curve.empty())
      throw UsageError(fmt::format(
          "workload: compute: gemm_curve: preset: GPU preset '{}' has no gemm_curve; measure one with `fabricbench "
          "gemm --shapes-of WORKLOAD --out FILE` and give that file, or add a cited gemm_curve to the preset "
          "(--presets-add FILE)",
          gpu.name));
    GemmCurve curve = w.gemm;
    curve.points = gpu.gemm_curve.of(w.dtype);
    curve.shapes.clear();
    curve.source = fmt::format("{}'s preset curve", gpu.name);
    const std::string why =
        w.gemm.preset() ? "" : fmt::format("; {} was measured on {}, not this GPU", w.gemm.source, measured_on.name);
    // The published sweeps are bf16 and fp16: an fp8 step would be priced
    // at half its tensor cores' rate without a word.
    const std::string fp8 = w.dtype.rfind("fp8", 0) == 0
                                ? "; the preset curve has no fp8 points, so the fp8 products are priced at its bf16 "
                                  "rates: measure them with `fabricbench gemm --shapes-of WORKLOAD -d fp8_e4m3 --out "
                                  "FILE`"
                                : "";
    return priced(w, curve, 1.0, fmt::format(" ({}{}{})", gpu.gemm_curve.source, why, fp8), "preset_curve");
  }
  // A GPU without a preset curve keeps the record scaled by peak, and says so.
  const std::string no_curve =
      other_gpu && w.gemm.source != "stated" ? fmt::format(" ({} has no preset GEMM curve)", gpu.name) : "";
  return priced(w, w.gemm, scale, moved + no_curve, w.gemm.source == "stated" ? "stated_curve" : "measured_curve");
}

}  // namespace fb::model::detail

namespace fb::model {

LayerPricing price_layer_shapes(const Workload& w, const Presets& presets) {
  const GpuPreset& gpu = presets.gpu(w.cluster.gpu, "cluster: gpu");
  // A hardware-over-model ratio of 1: it only turns an MFU into a rate, and
  // an MFU prices no shape.
  const detail::ComputeRate rate = detail::compute_rate(w, gpu, presets, 1.0);
  LayerPricing out{{}, rate.source, rate.how, rate.tflops};
  if (rate.shape_tflops.empty()) return out;
  const std::vector<GemmShape> shapes = layer_gemm_shapes(w);
  for (std::size_t i = 0; i < shapes.size(); ++i) out.shapes.push_back({shapes[i], rate.shape_tflops[i]});
  return out;
}

}  // namespace fb::model
