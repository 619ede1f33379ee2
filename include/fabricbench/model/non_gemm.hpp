// The work of a training step that is not a matrix product: a transformer
// layer's norms, activation and residual adds (and, without flash attention,
// its softmax; dropout and rotary embeddings where the workload runs them),
// the input embedding and the loss, forward and backward, and the optimizer
// step. These kernels
// are memory-bound: each is priced as the bytes it reads and writes in the
// GPU's memory over the memory bandwidth of the GPU's datasheet
// (profiles/presets/gpus.yaml, memory_tbps).
//
// Fusion assumption: one kernel per row of the table, each reading its
// inputs from memory once and writing its outputs once; nothing fused across
// rows (a bias is taken as fused into its product, as cuBLASLt's epilogue and
// Megatron's bias-GeLU fusion run it), the attention softmax fused into flash
// attention where the workload runs it, the optimizer one fused pass over its
// tensors (apex FusedAdam, torch.optim.AdamW(fused=True)). A framework that
// fuses more (a norm with the residual add before it) moves fewer bytes.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "fabricbench/model/formulas.hpp"
#include "fabricbench/model/workload.hpp"

namespace fb::model {

// What one token's tensor of a kernel spans on one GPU: the hidden size h
// (over tp with sequence parallelism), the MLP's 4h / tp, one row of
// attention scores per head, s x heads / tp, the query's (or key's) heads on
// this GPU, h / tp, or one row of logits, vocab / tp.
enum class Width { hidden, ffn, scores, heads, vocab };
inline constexpr std::size_t kWidths = 5;
static_assert(static_cast<std::size_t>(Width::vocab) + 1 == kWidths);

// Which workloads run a kernel: every one, those with dropout (training:
// dropout above 0), those with rotary position embeddings (model: rotary).
enum class Runs { always, dropout, rotary };

// PyTorch's dropout keeps its mask as bool, one byte per element.
inline constexpr double kMaskBytes = 1;

// One memory-bound kernel: `reads` tensors of `width` elements per token read
// and `writes` written, each once, in the activation dtype, and `masks`
// dropout keep masks of the same width (kMaskBytes each) read or written.
struct NonGemmKernel {
  const char* name;  // "MLP activation (GeLU)"
  Pass pass;         // forward, or backward (full recompute repeats a layer's forward in the backward)
  Width width;
  int reads = 0;
  int writes = 0;
  const char* tensors;  // which tensors, in words
  Runs runs = Runs::always;
  int masks = 0;
};

// The table: a pre-norm GPT layer (GPT-2, MPT, Megatron's GPT) with a GeLU
// MLP of 4h. The softmax and attention-dropout rows (width scores) run only
// without flash attention, which fuses them into its kernel.
std::span<const NonGemmKernel> layer_non_gemm_kernels();

// Once per micro-batch outside the layers: the input embedding's lookup
// (a gather) and its backward (a scatter-add into the embedding's gradient)
// and the loss, softmax cross-entropy over the vocabulary as one fused
// kernel per pass (Megatron's vocab-parallel cross-entropy, flash-attn's
// CrossEntropyLoss that llm-foundry's MPT runs): the forward reads the
// logits, the backward reads them again and writes their gradient. Without
// a vocabulary (model: vocab) the loss rows move nothing.
std::span<const NonGemmKernel> model_non_gemm_kernels();

// "h", "4h/tp", "s x heads/tp", "h/tp", "vocab/tp": how the assumption line names a width.
std::string_view name(Width width);

// Elements per token of a width on one GPU.
double width_elements(const Workload& w, Width width);

// Bytes one layer's kernels of a pass read and write for one micro-batch on
// one GPU (micro_batch x seq_len tokens, act_bytes per element). The
// backward includes the forward's again under full recompute, and the
// softmax forward again under selective recompute without flash attention.
double layer_non_gemm_bytes(const Workload& w, Pass pass);

// Bytes the kernels outside the layers (model_non_gemm_kernels) read and
// write for one micro-batch on one GPU of the stage that runs them; no
// recompute repeats them.
double model_non_gemm_bytes(const Workload& w, Pass pass);

// Mixed-precision Adam, one fused pass over the parameters this GPU updates
// (ZeRO-1 and up: its 1/dp shard): reads the fp32 parameter, momentum and
// variance (4 bytes each) and the gradient buffer (grad_memory_bytes), writes
// the three fp32 tensors back and the parameter in its training dtype
// (param_bytes); gradient clipping by global norm (Megatron-LM's default
// clip_grad 1.0) reads the gradient buffer once more.
double optimizer_bytes_per_param(const Workload& w);

// The parameters the optimizer step updates on one GPU of the fullest stage.
double optimizer_params(const Workload& w, const Parallel& p);

// Bytes over TB/s, in microseconds.
double memory_time_us(double bytes, double memory_tbps);

}  // namespace fb::model
