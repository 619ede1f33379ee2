// Attention's score and value products (Q K^T and the product with V, the
// 12 L h s FLOPs per token of formulas.cpp) priced as flash attention's
// fused kernel runs them, at the GPU's attention curve. Internal to the model.
#pragma once

#include <string>

#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/workload.hpp"

namespace fb::model::detail {

// Per GPU per step (the layers of an average stage, all micro-batches).
struct AttentionTime {
  // The products' FLOPs as the model counts them (the full s x s matrix,
  // the backward twice the forward, recompute's forward again), which the
  // GEMM rate no longer prices; 0 where it still does.
  double model_flops = 0;
  double forward_us = 0;  // the kernel's forward passes (recompute's included)
  double backward_us = 0;
  std::string how;  // appended to the step's compute line
};

// Priced where the workload runs flash attention and the GPU's preset has an
// attention curve for the workload's head dimension; otherwise the products
// stay at the GEMM rate and `how` says why.
AttentionTime attention_time(const Workload& w, const Parallel& p, const GpuPreset& gpu);

// Log-log interpolation of (x, TFLOP/s) points; the nearest point's rate
// outside them.
double curve_tflops(const std::vector<std::pair<double, double>>& points, double x);

}  // namespace fb::model::detail
