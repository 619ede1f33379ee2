// The matrix products one transformer layer runs per micro-batch on one GPU,
// forward and backward, with the workload's micro-batch, sequence, hidden
// size and tensor-parallel degree (Megatron's column/row split): what
// `fabricbench gemm --shapes-of` measures and the model prices shape by shape.
#pragma once

#include <string>
#include <vector>

#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/workload.hpp"

namespace fb::model {

// C (m x n) = A (m x k) B (k x n): 2 m n k FLOPs per product.
struct GemmShape {
  std::string name;  // "qkv", "qkv dgrad", "qkv wgrad", ...
  long long m = 0;
  long long n = 0;
  long long k = 0;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// The twelve products of one layer (QKV, attention out, MLP up, MLP down;
// each forward, data gradient and weight gradient), in that order. Attention
// scores (Q K^T, softmax V) are left out: flash attention runs them as one
// fused kernel, not as GEMMs. Throws fb::UsageError for a workload given by
// forward FLOPs (no shapes) or a hidden size the TP degree does not divide.
std::vector<GemmShape> layer_gemm_shapes(const Workload& w);

// cuBLAS takes int sides, and 65536 a side is past any GPU's memory already:
// "" when `s` is within, else what is wrong with it ("the qkv product is
// 70000x4096x4096: at most 65536 a side").
std::string oversized_gemm(const GemmShape& s);

struct PricedShape {
  GemmShape shape;
  double tflops = 0;  // as the model prices this product on the workload's GPU
};

// A layer's products as the model prices them on the workload's cluster GPU
// (`fabricbench step` sets what it measured of each beside them).
struct LayerPricing {
  std::vector<PricedShape> shapes;  // empty where one rate prices them all
  std::string source;               // compute source: measured_curve, preset_curve, mfu, ...
  std::string how;                  // the assumption, in words
  double layer_tflops = 0;          // the rate of the layer's products together
};

// Throws fb::UsageError as the model does (an unknown GPU, a preset curve the
// GPU lacks).
LayerPricing price_layer_shapes(const Workload& w, const Presets& presets);

}  // namespace fb::model
