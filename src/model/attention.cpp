#include "attention.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace fb::model::detail {
namespace {

// FlashAttention's benchmarks (benchmarks/benchmark_flash_attention.py,
// flops()) count the backward as 2.5 times the forward: it recomputes the
// scores before the four products of the gradient.
constexpr double kBackwardOverForward = 2.5;
// A causal mask leaves half the s x s matrix to compute; those benchmarks
// count half the FLOPs for it.
constexpr double kCausalShare = 0.5;

std::string fallback(const Workload& w, const GpuPreset& gpu, int head_dim) {
  if (!w.flash_attention)
    return "; attention's score and value products as batched GEMMs at that rate (no flash attention)";
  if (gpu.attention_curve.empty())
    return fmt::format(
        "; attention's score and value products at that GEMM rate too: {} has no attention curve in its preset",
        gpu.name);
  return fmt::format(
      "; attention's score and value products at that GEMM rate too: {}'s attention curve is for head dim {}, this "
      "workload's is {}",
      gpu.name, gpu.attention_curve.head_dim, head_dim);
}

}  // namespace

double curve_tflops(const std::vector<std::pair<double, double>>& pts, double x) {
  if (x <= pts.front().first) return pts.front().second;
  if (x >= pts.back().first) return pts.back().second;
  const auto hi = std::lower_bound(pts.begin(), pts.end(), x,
                                   [](const std::pair<double, double>& p, double s) { return p.first < s; });
  const auto lo = std::prev(hi);
  const double t = std::log(x / lo->first) / std::log(hi->first / lo->first);
  return std::exp(std::log(lo->second) + t * (std::log(hi->second) - std::log(lo->second)));
}

AttentionTime attention_time(const Workload& w, const Parallel& p, const GpuPreset& gpu) {
  AttentionTime t;
  const int heads = w.heads > 0 ? w.heads : std::max(1, w.hidden / 128);
  const int head_dim = w.hidden / heads;
  const AttentionPresetCurve& c = gpu.attention_curve;
  if (!w.flash_attention || c.empty() || c.head_dim != head_dim) {
    t.how = fallback(w, gpu, head_dim);
    return t;
  }
  // The forward's 4 s h FLOPs per token and layer, per GPU: heads over tp,
  // layers over pp, tokens over dp.
  const double forward = 4.0 * w.seq_len * static_cast<double>(w.hidden) * w.layers * w.tokens_per_step() / p.gpus;
  const double forward_passes = w.recompute == Recompute::none ? 1 : 2;
  t.model_flops = forward * (3 + forward_passes - 1);
  const double forward_tflops = curve_tflops(c.forward_causal, w.seq_len);
  const double backward_tflops = curve_tflops(c.backward, w.seq_len);
  t.forward_us = forward_passes * kCausalShare * forward / (forward_tflops * 1e6);
  t.backward_us = kCausalShare * kBackwardOverForward * forward / (backward_tflops * 1e6);
  const bool inside = w.seq_len >= c.forward_causal.front().first && w.seq_len <= c.forward_causal.back().first;
  t.how = fmt::format(
      "; attention's score and value products in flash attention's kernel at {}'s attention curve for sequence {}{} "
      "(head dim {}, causal: half the s x s matrix; forward {:.4g} TFLOP/s with the mask, backward {:.4g} TFLOP/s "
      "without it, the source's only backward, on 2.5x the forward's FLOPs with its recomputed scores; {}) = {:.4g} "
      "ms per GPU per step",
      gpu.name, w.seq_len, inside ? "" : " (outside it: its edge)", head_dim, forward_tflops, backward_tflops, c.source,
      (t.forward_us + t.backward_us) / 1e3);
  return t;
}

}  // namespace fb::model::detail
