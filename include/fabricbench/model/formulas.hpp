// Every formula of the model in one place, each with where it comes from
// (src/model/formulas.cpp cites them; docs/model.md explains them).
// Units: bytes, microseconds, GB/s (1e9 bytes/s), FLOPs.
#pragma once

#include <vector>

#include "fabricbench/core/types.hpp"

namespace fb::model {

// ---- Per-op factors of a ring (one place for them) -------------------------

// What a ring of `op` on n ranks over `nodes` nodes costs in steps and bytes:
// NCCL's step counts (src/graph/tuning.cc: 2(n-1) for all_reduce, n-1 for
// all_gather and reduce_scatter, n for broadcast and reduce; of them
// 2(N-1), N-1, N cross nodes) and nccl-tests' busbw factor (fb::busbw_factor:
// the bytes each rank sends per byte of the size, 2(n-1)/n, (n-1)/n, 1).
// Point-to-point: one step of the whole size.
struct RingFactors {
  int steps = 0;
  int inter_steps = 0;
  double wire = 0;  // bytes sent per rank per byte of the size
};
RingFactors ring_factors(Op op, int nranks, int nodes = 1);

// Shorthands over ring_factors.
int ring_steps(Op op, int nranks);
double ring_wire_bytes(Op op, int nranks, double bytes);
// steps x alpha + wire x S / B: a ring with one latency per step and
// per-rank bandwidth B (the bandwidth term is nccl-tests' busbw definition).
double ring_time_us(Op op, int nranks, double bytes, double alpha_us, double bw_gbps);

// ---- Compute ----------------------------------------------------------------

// Model FLOPs per token: 6*params + 12*layers*hidden*seq_len.
double model_flops_per_token(double params, int layers, int hidden, int seq_len);

// Activation recomputation: none, full (the whole forward again in the
// backward) or selective (only the attention core: Korthikanti et al. 2022).
enum class Recompute { none, full, selective };
// Hardware FLOPs per token: model FLOPs plus what recomputation repeats.
double hardware_flops_per_token(double model_flops, Recompute r, int layers, int hidden, int seq_len);
// Share of the hardware FLOPs spent in the backward pass (the window that
// can hide gradient reduction): 2/3, or 3/4 with full recompute.
double backward_share(Recompute r);

// ---- Parallelism volumes ----------------------------------------------------

// Tensor parallel all-reduces per layer per micro-batch: 4, 6 with full recompute.
int tp_allreduces_per_layer(Recompute r);
// Their size: b*s*h activations.
double tp_allreduce_bytes(int micro_batch, int seq_len, int hidden, double act_bytes);
// Pipeline: bubble over ideal compute, (p-1)/(v*m).
double bubble_fraction(int pp, int virtual_stages, int micro_batches);
// Layers of the fullest stage when `layers` do not divide pp x v evenly: each
// of the pp*v model chunks holds floor or ceil of layers/(pp v), the fullest
// stage v of the larger ones (Megatron-LM's uneven split).
int max_stage_layers(int layers, int pp, int virtual_stages);
// Point-to-point messages per stage per step: forward activations and
// backward gradients for each micro-batch, v times with interleaving.
int pp_messages_per_step(int micro_batches, int virtual_stages);

// Data-parallel collectives of one ZeRO stage.
enum class Pass { forward, backward };
struct DpCollective {
  const char* name;     // "gradient all-reduce"
  Op op;
  bool gradients;       // gradients (else parameters)
  int per_micro_batch;  // times per micro-batch (0: once per step)
  Pass window;          // the compute it can hide under, when overlap allows
};
std::vector<DpCollective> dp_collectives(int zero_stage);

// Bucketed calls for `bytes`: ceil(bytes / bucket), at least `minimum`.
double bucket_calls(double bytes, double bucket_bytes, double minimum);

// DeepSpeed ZeRO-3 (deepspeed/runtime/zero/config.py; defaults in brackets):
// parameters are fetched module by module, `prefetch_bucket` elements ahead
// [stage3_prefetch_bucket_size 5e7]; a fetched module stays for the backward
// pass when it is reused within `max_reuse_distance` elements
// [stage3_max_reuse_distance 1e9] and `max_live` elements fit
// [stage3_max_live_parameters 1e9]; gradients are reduce-scattered in buckets
// of `reduce_bucket` elements [reduce_bucket_size 5e8].
struct Zero3Config {
  double prefetch_bucket = 5e7;
  double reduce_bucket = 5e8;
  double max_live = 1e9;
  double max_reuse_distance = 1e9;
  int modules_per_layer = 4;  // partitioned modules fetched per layer
};
struct Zero3Calls {
  double modules = 0;          // fetched modules per pass
  double module_params = 0;    // elements per module
  double forward_gathers = 0;  // per micro-batch
  double backward_gathers = 0;
  double kept_modules = 0;     // fetched in the forward and still live for the backward
  double prefetch_depth = 0;   // modules fetched ahead (0: every fetch waits)
  double reduce_scatters = 0;  // per micro-batch
};
Zero3Calls zero3_calls(const Zero3Config& c, double params_per_gpu, int layers);

// ---- Memory -----------------------------------------------------------------

// Parameters, gradients and Adam states per GPU for a ZeRO stage, mixed
// precision: 2 (parameters) + grad_bytes (2, or 4 for an fp32 main_grad) + 12
// bytes per parameter before sharding.
double model_state_bytes(double params_per_gpu, int zero_stage, int dp, double grad_bytes = 2);
// Activations per GPU.
struct ActivationShape {
  int micro_batch, seq_len, hidden, heads, layers_per_stage, tp, pp, micro_batches;
  double act_bytes;
  Recompute recompute;
  bool flash_attention;
  bool sequence_parallel = false;
};
double activation_bytes(const ActivationShape& a);

}  // namespace fb::model
