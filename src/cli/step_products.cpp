#include "step_products.hpp"

#include <fmt/format.h>

#include "fabricbench/core/errors.hpp"

namespace fb::cli {
namespace {

// This rank's median per product, in layer order; the error (the same text
// a fit or shape check gives) stops at the first product that cannot run.
std::vector<double> time_products(const GpuTools& tools, int device, const std::vector<model::GemmShape>& shapes,
                                  Dtype dtype, std::string& error) {
  std::vector<double> us(shapes.size(), 0.0);
  for (std::size_t i = 0; i < shapes.size() && error.empty(); ++i) {
    const model::GemmShape& s = shapes[i];
    GemmSpec spec;
    spec.dtype = dtype;
    spec.m = static_cast<int>(s.m);
    spec.n = static_cast<int>(s.n);
    spec.k = static_cast<int>(s.k);
    spec.iters = kProductIters;
    spec.warmup = kProductWarmup;
    try {
      us[i] = tools.run_gemm(spec, device).time.median_us;
    } catch (const UsageError& e) {
      error = fmt::format("the layer's {} product {}x{}x{}: {}", s.name, s.m, s.n, s.k, e.what());
    }
  }
  return us;
}

}  // namespace

std::optional<Dtype> product_dtype(const model::Workload& w, std::string& why) {
  const std::optional<Dtype> d = parse_dtype(w.dtype);
  if (d && gemm_offers(*d)) return d;
  why = fmt::format("the workload's dtype {} has no product of its own here ({})", w.dtype, kGemmDtypes);
  return std::nullopt;
}

double LayerProducts::measured_layer_us() const {
  double sum = 0;
  for (const ProductFigure& p : products) sum += p.measured_us;
  return sum;
}

double LayerProducts::model_tflops(const ProductFigure& p) const {
  return p.model_tflops > 0 ? p.model_tflops : model_layer_tflops;
}

double LayerProducts::model_us(const ProductFigure& p) const {
  return p.shape.flops() / (model_tflops(p) * 1e12) * 1e6;
}

double LayerProducts::model_layer_us() const {
  double sum = 0;
  for (const ProductFigure& p : products) sum += model_us(p);
  return sum;
}

LayerProducts measure_layer_products(const Comm& world, const GpuTools& tools, int device,
                                     const std::vector<model::GemmShape>& shapes, const model::Workload& w,
                                     const model::Presets& presets, Dtype dtype) {
  std::string error;
  model::LayerPricing pricing;
  try {
    pricing = model::price_layer_shapes(w, presets);
  } catch (const UsageError& e) {
    error = e.what();
  }
  for (const model::GemmShape& s : shapes)
    if (error.empty()) error = model::oversized_gemm(s);
  if (error = agree_on_error(world, error); !error.empty()) throw UsageError(error);
  std::vector<double> us = time_products(tools, device, shapes, dtype, error);
  if (error = agree_on_error(world, error); !error.empty()) throw UsageError(error);
  LayerProducts out;
  out.dtype = dtype;
  out.model_source = pricing.source;
  out.model_layer_tflops = pricing.layer_tflops;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto [slowest_us, rank] = world.maxloc_quiet(us[i]);
    ProductFigure f;
    f.shape = shapes[i];
    f.model_tflops = pricing.shapes.empty() ? 0 : pricing.shapes[i].tflops;
    f.measured_us = slowest_us;
    f.measured_tflops = slowest_us > 0 ? shapes[i].flops() / (slowest_us * 1e-6) / 1e12 : 0;
    f.slowest_rank = rank;
    out.products.push_back(std::move(f));
  }
  return out;
}

}  // namespace fb::cli
