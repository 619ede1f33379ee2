#include "fabricbench/model/non_gemm.hpp"

#include <array>

namespace fb::model {
namespace {

// Forward rows in the order a pre-norm layer runs them, then the backward's
// in reverse. x is the layer's input; the residual adds are y = x + f(x).
constexpr NonGemmKernel kLayer[] = {
    {"attention layer norm", Pass::forward, Width::hidden, 1, 1, "reads x, writes the normalised x"},
    {"rotary embedding", Pass::forward, Width::heads, 2, 2, "reads the query and key, writes them rotated",
     Runs::rotary},
    {"attention softmax", Pass::forward, Width::scores, 1, 1,
     "reads the scores Q K^T (scaled and masked in the same kernel), writes the probabilities"},
    {"attention dropout", Pass::forward, Width::scores, 1, 1,
     "reads the probabilities, writes them dropped and the keep mask", Runs::dropout, 1},
    {"attention output dropout", Pass::forward, Width::hidden, 1, 1,
     "reads the output projection's result, writes it dropped and the keep mask", Runs::dropout, 1},
    {"attention residual add", Pass::forward, Width::hidden, 2, 1,
     "reads x and the attention output, writes their sum"},
    {"MLP layer norm", Pass::forward, Width::hidden, 1, 1, "reads the attention block's output, writes it normalised"},
    {"MLP activation (GeLU)", Pass::forward, Width::ffn, 1, 1, "reads the up-projection's output, writes its GeLU"},
    {"MLP output dropout", Pass::forward, Width::hidden, 1, 1,
     "reads the down-projection's result, writes it dropped and the keep mask", Runs::dropout, 1},
    {"MLP residual add", Pass::forward, Width::hidden, 2, 1,
     "reads the block's input and the MLP output, writes their sum"},
    {"MLP output dropout backward", Pass::backward, Width::hidden, 1, 1,
     "reads the output's gradient and the keep mask, writes the gradient of the dropout's input", Runs::dropout, 1},
    {"MLP activation backward", Pass::backward, Width::ffn, 2, 1,
     "reads the saved up-projection output and the gradient of its GeLU, writes the up-projection's gradient"},
    {"MLP layer norm backward", Pass::backward, Width::hidden, 2, 1,
     "reads the norm's saved input and its output's gradient, writes its input's gradient"},
    {"MLP residual gradient sum", Pass::backward, Width::hidden, 2, 1,
     "reads the gradients reaching the block's input through the residual and through the norm, writes their sum"},
    {"attention output dropout backward", Pass::backward, Width::hidden, 1, 1,
     "reads the output's gradient and the keep mask, writes the gradient of the dropout's input", Runs::dropout, 1},
    {"attention dropout backward", Pass::backward, Width::scores, 1, 1,
     "reads the dropped probabilities' gradient and the keep mask, writes the probabilities' gradient", Runs::dropout,
     1},
    {"attention softmax backward", Pass::backward, Width::scores, 2, 1,
     "reads the saved probabilities and their gradient, writes the scores' gradient"},
    {"rotary embedding backward", Pass::backward, Width::heads, 2, 2,
     "reads the rotated query's and key's gradients, writes the gradients rotated back", Runs::rotary},
    {"attention layer norm backward", Pass::backward, Width::hidden, 2, 1,
     "reads the norm's saved input and its output's gradient, writes its input's gradient"},
    {"attention residual gradient sum", Pass::backward, Width::hidden, 2, 1,
     "reads the gradients reaching x through the residual and through the norm, writes their sum"},
};

// Once per micro-batch, outside the layers: the input embedding on the first
// stage, the loss on the last.
constexpr NonGemmKernel kModel[] = {
    {"embedding lookup", Pass::forward, Width::hidden, 1, 1,
     "reads each token's row of the embedding table, writes it as the first layer's input"},
    {"embedding dropout", Pass::forward, Width::hidden, 1, 1,
     "reads the embeddings, writes them dropped and the keep mask", Runs::dropout, 1},
    {"loss (softmax cross-entropy)", Pass::forward, Width::vocab, 1, 0,
     "reads the logits, writes each token's loss and log-sum-exp (one value each: nothing per vocabulary entry)"},
    {"loss backward", Pass::backward, Width::vocab, 1, 1,
     "reads the logits (and the saved log-sum-exp), writes their gradient"},
    {"embedding dropout backward", Pass::backward, Width::hidden, 1, 1,
     "reads the embeddings' gradient and the keep mask, writes the gradient of the lookup's output", Runs::dropout, 1},
    {"embedding backward (scatter-add)", Pass::backward, Width::hidden, 2, 1,
     "reads each token's output gradient and its row of the embedding gradient, writes the row with the sum"},
};

constexpr std::array<std::string_view, kWidths> kWidthNames = {"h", "4h/tp", "s x heads/tp", "h/tp", "vocab/tp"};

bool runs(const Workload& w, const NonGemmKernel& k) {
  if (k.width == Width::scores && w.flash_attention) return false;  // inside flash attention's kernel
  switch (k.runs) {
    case Runs::always:
      return true;
    case Runs::dropout:
      return w.dropout > 0;
    case Runs::rotary:
      return w.rotary;
  }
  return false;
}

// Bytes of one token's rows of a pass; `scores_only` keeps the softmax's alone.
double token_bytes(const Workload& w, std::span<const NonGemmKernel> table, Pass pass, bool scores_only) {
  double bytes = 0;
  for (const NonGemmKernel& k : table) {
    if (k.pass != pass || !runs(w, k) || (scores_only && k.width != Width::scores)) continue;
    bytes += ((k.reads + k.writes) * w.act_bytes + k.masks * kMaskBytes) * width_elements(w, k.width);
  }
  return bytes;
}

double tokens(const Workload& w) { return static_cast<double>(w.micro_batch) * w.seq_len; }

}  // namespace

std::span<const NonGemmKernel> layer_non_gemm_kernels() { return kLayer; }

std::span<const NonGemmKernel> model_non_gemm_kernels() { return kModel; }

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
    case Width::heads:
      return h / tp;
    case Width::vocab:
      return static_cast<double>(w.vocab) / tp;  // Megatron's vocab-parallel output layer and loss
  }
  return 0;
}

double layer_non_gemm_bytes(const Workload& w, Pass pass) {
  const double t = tokens(w);
  if (pass == Pass::forward) return t * token_bytes(w, kLayer, Pass::forward, false);
  double bytes = token_bytes(w, kLayer, Pass::backward, false);
  if (w.recompute == Recompute::full) bytes += token_bytes(w, kLayer, Pass::forward, false);
  if (w.recompute == Recompute::selective) bytes += token_bytes(w, kLayer, Pass::forward, true);
  return t * bytes;
}

double model_non_gemm_bytes(const Workload& w, Pass pass) { return tokens(w) * token_bytes(w, kModel, pass, false); }

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
