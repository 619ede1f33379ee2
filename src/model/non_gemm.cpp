#include "fabricbench/model/non_gemm.hpp"

#include <array>

namespace fb::model {
namespace {

// Forward rows in the order a pre-norm layer runs them, then the backward's
// in reverse. x is the layer's input; the residual adds are y = x + f(x).
constexpr NonGemmKernel kLayer[] = {
    {"attention layer norm", Pass::forward, Width::hidden, 1, 1, "reads x, writes the normalised x"},
    {"attention softmax", Pass::forward, Width::scores, 1, 1,
     "reads the scores Q K^T (scaled and masked in the same kernel), writes the probabilities"},
    {"attention residual add", Pass::forward, Width::hidden, 2, 1,
     "reads x and the attention output, writes their sum"},
    {"MLP layer norm", Pass::forward, Width::hidden, 1, 1, "reads the attention block's output, writes it normalised"},
    {"MLP activation (GeLU)", Pass::forward, Width::ffn, 1, 1, "reads the up-projection's output, writes its GeLU"},
    {"MLP residual add", Pass::forward, Width::hidden, 2, 1,
     "reads the block's input and the MLP output, writes their sum"},
    {"MLP activation backward", Pass::backward, Width::ffn, 2, 1,
     "reads the saved up-projection output and the gradient of its GeLU, writes the up-projection's gradient"},
    {"MLP layer norm backward", Pass::backward, Width::hidden, 2, 1,
     "reads the norm's saved input and its output's gradient, writes its input's gradient"},
    {"MLP residual gradient sum", Pass::backward, Width::hidden, 2, 1,
     "reads the gradients reaching the block's input through the residual and through the norm, writes their sum"},
    {"attention softmax backward", Pass::backward, Width::scores, 2, 1,
     "reads the saved probabilities and their gradient, writes the scores' gradient"},
    {"attention layer norm backward", Pass::backward, Width::hidden, 2, 1,
     "reads the norm's saved input and its output's gradient, writes its input's gradient"},
    {"attention residual gradient sum", Pass::backward, Width::hidden, 2, 1,
     "reads the gradients reaching x through the residual and through the norm, writes their sum"},
};

constexpr std::array<std::string_view, kWidths> kWidthNames = {"h", "4h/tp", "s x heads/tp"};

// Bytes of the rows of one pass; `scores_only` keeps the softmax rows alone.
double pass_bytes(const Workload& w, Pass pass, bool scores_only) {
  const double tokens = static_cast<double>(w.micro_batch) * w.seq_len;
  double elements = 0;
  for (const NonGemmKernel& k : kLayer) {
    if (k.pass != pass || (k.width == Width::scores && w.flash_attention)) continue;
    if (scores_only && k.width != Width::scores) continue;
    elements += (k.reads + k.writes) * width_elements(w, k.width);
  }
  return tokens * elements * w.act_bytes;
}

}  // namespace

std::span<const NonGemmKernel> layer_non_gemm_kernels() { return kLayer; }

std::string_view name(Width width) { return kWidthNames.at(static_cast<std::size_t>(width)); }

double width_elements(const Workload& w, Width width) {
  const double h = w.hidden, tp = w.tp;
  const double heads = w.heads > 0 ? w.heads : h / 128;
  switch (width) {
    case Width::hidden:
      return w.sequence_parallel ? h / tp : h;  // replicated on every TP rank otherwise
    case Width::ffn:
      return 4 * h / tp;
    case Width::scores:
      return static_cast<double>(w.seq_len) * heads / tp;
  }
  return 0;
}

double layer_non_gemm_bytes(const Workload& w, Pass pass) {
  if (pass == Pass::forward) return pass_bytes(w, Pass::forward, false);
  double bytes = pass_bytes(w, Pass::backward, false);
  if (w.recompute == Recompute::full) bytes += pass_bytes(w, Pass::forward, false);
  if (w.recompute == Recompute::selective) bytes += pass_bytes(w, Pass::forward, true);
  return bytes;
}

double optimizer_bytes_per_param(const Workload& w) {
  constexpr double kFp32 = 4;
  const double reads = 3 * kFp32 + w.grad_memory_bytes;  // parameter, momentum, variance; gradient
  const double writes = 3 * kFp32 + w.param_bytes;       // the same three; the training-dtype copy
  const double clip = w.grad_memory_bytes;               // the global norm reads the gradients once
  return reads + writes + clip;
}

double optimizer_params(const Workload& w, const Parallel& p) {
  return params_per_gpu(w, p) / (w.zero >= 1 ? p.dp : 1);
}

double memory_time_us(double bytes, double memory_tbps) { return bytes / (memory_tbps * 1e6); }

}  // namespace fb::model
