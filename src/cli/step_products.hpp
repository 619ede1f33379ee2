// The GPU step's products shape by shape (issue 38): each product of one
// layer of the workload timed on every rank's GPU, the slowest rank's median
// set beside the rate the model prices that product at. The step's own
// compute runs products of one square size for the time the model plans; this
// is what the layer's own shapes take on these GPUs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricbench/backends/gpu.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/model/gemm_shapes.hpp"

namespace fb::cli {

struct ProductFigure {
  model::GemmShape shape;
  double model_tflops = 0;     // 0 where the model prices the layer at one rate
  double measured_us = 0;      // median per product, the slowest rank's
  double measured_tflops = 0;  // the shape's flops over measured_us
  int slowest_rank = -1;
};

struct LayerProducts {
  std::vector<ProductFigure> products;  // layer_gemm_shapes order
  Dtype dtype = Dtype::bfloat16;        // what they were timed in
  std::string model_source;             // the model's compute source (measured_curve, preset_curve, mfu, ...)
  double model_layer_tflops = 0;        // the model's rate of the layer's products together
  double measured_layer_us() const;     // one layer's products, each at its slowest rank's time
  double model_layer_us() const;        // the same products at the model's rate(s)
  // One product's time at the model's rate for it (the layer's where the
  // model prices one rate for all).
  double model_us(const ProductFigure& p) const;
  double model_tflops(const ProductFigure& p) const;
};

// Products timed per shape: enough to take a median, few enough for a
// step's set-up (12 shapes of a layer).
inline constexpr int kProductIters = 10;
inline constexpr int kProductWarmup = 3;

// The datatype a workload's products are timed in: its own (training:
// dtype), so that they stand beside the model's rates for that datatype
// whatever the step's --gemm-dtype. Empty, with `why`, where `gemm` has no
// product of it (fp8 e5m2: Transformer Engine's gradients, which multiply
// against e4m3).
std::optional<Dtype> product_dtype(const model::Workload& w, std::string& why);

// Collective. Each rank runs `shapes` (model::layer_gemm_shapes of `w`) on
// `device` (current) in `dtype`; a UsageError, the same on every rank, when
// one does not fit or the model cannot price the workload; RunError from the
// library as run_gemm gives it.
LayerProducts measure_layer_products(const Comm& world, const GpuTools& tools, int device,
                                     const std::vector<model::GemmShape>& shapes, const model::Workload& w,
                                     const model::Presets& presets, Dtype dtype);

}  // namespace fb::cli
