// The model's formulas, each with its source. Sizes follow nccl-tests'
// convention (docs/results-schema.md): per-rank buffer for all_reduce and
// sendrecv, the whole gathered buffer for all_gather and reduce_scatter.
#include "fabricbench/model/formulas.hpp"

#include <algorithm>
#include <cmath>

#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/op_desc.hpp"
#include "fabricbench/model/units.hpp"

namespace fb::model {

namespace {
}

// The one place that knows each op's ring, read from the op table
// (op_desc.hpp): NCCL's step counts (src/graph/tuning.cc, ncclTopoTuneModel:
// nsteps and nInterSteps) and nccl-tests' busbw factors (fb::busbw_factor).
// Ring algorithms: Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms
// for clusters of workstations", JPDC 2009; Thakur, Rabenseifner & Gropp,
// "Optimization of collective communication operations in MPICH", IJHPCA 2005.
RingFactors ring_factors(Op op, int nranks, int nodes) {
  const OpDesc& d = op_desc(op);
  const int n = nranks, nn = std::max(1, nodes);
  RingFactors f;
  switch (d.steps) {
    case StepsRule::one:  // one hop whatever n: point-to-point, sendrecv's ring, copies
      return {1, nodes > 1 ? 1 : 0, 1.0};
    case StepsRule::ring:
      f.steps = n - 1;
      f.inter_steps = nn - 1;
      break;
    case StepsRule::double_ring:
      f.steps = 2 * (n - 1);
      f.inter_steps = 2 * (nn - 1);
      break;
    case StepsRule::chain:  // a pipelined chain through every rank
      f.steps = n;
      f.inter_steps = nn > 1 ? nn : 0;
      break;
  }
  if (n <= 1) return {};
  switch (d.wire) {
    case WireRule::message:
      f.wire = 1.0;
      break;
    case WireRule::bus:
      f.wire = busbw_factor(op, n);
      break;
  }
  return f;
}

int ring_steps(Op op, int nranks) { return ring_factors(op, nranks).steps; }

double ring_wire_bytes(Op op, int nranks, double bytes) { return ring_factors(op, nranks).wire * bytes; }

double ring_time_us(Op op, int nranks, double bytes, double alpha_us, double bw_gbps) {
  const RingFactors f = ring_factors(op, nranks);
  if (f.steps == 0) return 0.0;
  return f.steps * alpha_us + f.wire * bytes / (bw_gbps * kBytesPerUsPerGbps);
}

// 6N per token for the forward and backward matmuls (Kaplan et al., "Scaling
// laws for neural language models", 2020) plus attention's 12*L*h*s (Chowdhery
// et al., PaLM, 2022, appendix B): the model FLOPs that MFU counts.
double model_flops_per_token(double params, int layers, int hidden, int seq_len) {
  return 6.0 * params + 12.0 * layers * static_cast<double>(hidden) * seq_len;
}

// Full recompute runs the forward twice: 8N instead of 6N (Narayanan et al.,
// "Efficient large-scale language model training on GPU clusters using
// Megatron-LM", SC 2021, eq. 3: 96 instead of 72). Selective recompute
// (Korthikanti et al., "Reducing activation recomputation in large
// transformer models", 2022, section 5) re-runs only the attention core,
// QK^T and the product with V: 4*s*h forward FLOPs per token per layer.
double hardware_flops_per_token(double model_flops, Recompute r, int layers, int hidden, int seq_len) {
  switch (r) {
    case Recompute::full: return model_flops * 4.0 / 3.0;
    case Recompute::selective: return model_flops + 4.0 * layers * static_cast<double>(hidden) * seq_len;
    case Recompute::none: break;
  }
  return model_flops;
}

// Backward = 2x forward (Kaplan et al. 2020); with full recompute the
// backward pass also re-runs the forward: 3 of 4 parts.
double backward_share(Recompute r) { return r == Recompute::full ? 3.0 / 4.0 : 2.0 / 3.0; }

// Megatron-LM tensor parallelism (Shoeybi et al., arXiv:1909.08053, fig. 4):
// per transformer layer two all-reduces in the forward (after attention and
// after the MLP) and two in the backward, each of b*s*h activations; full
// recompute repeats the forward's two (Korthikanti et al., "Reducing
// activation recomputation in large transformer models", MLSys 2023).
int tp_allreduces_per_layer(Recompute r) { return r == Recompute::full ? 6 : 4; }

double tp_allreduce_bytes(int micro_batch, int seq_len, int hidden, double act_bytes) {
  return static_cast<double>(micro_batch) * seq_len * hidden * act_bytes;
}

// Pipeline bubble of 1F1B over the ideal compute: (p-1)/m; interleaving v
// model chunks per stage divides it by v (Narayanan et al. SC 2021, 2.2).
double bubble_fraction(int pp, int virtual_stages, int micro_batches) {
  return pp <= 1 ? 0.0 : static_cast<double>(pp - 1) / (static_cast<double>(virtual_stages) * micro_batches);
}

int max_stage_layers(int layers, int pp, int virtual_stages) {
  const int chunks = pp * virtual_stages;
  return (layers + chunks - 1) / chunks * virtual_stages;
}

// Each micro-batch sends its activations forward and receives its gradients
// backward at the stage boundary; interleaving multiplies the messages by v
// (Narayanan et al. SC 2021, 2.2.2).
int pp_messages_per_step(int micro_batches, int virtual_stages) { return 2 * micro_batches * virtual_stages; }

// ZeRO (Rajbhandari et al., "ZeRO: memory optimizations toward training
// trillion parameter models", SC 2020, section 7): DDP all-reduces the
// gradients (2 Psi on the wire); stages 1 and 2 reduce-scatter the gradients
// and all-gather the updated parameters (2 Psi); stage 3 all-gathers the
// parameters in the forward and again in the backward and reduce-scatters the
// gradients (3 Psi) -- per forward-backward, so per micro-batch. With gradient
// accumulation, DDP and stage 1 reduce once per step (PyTorch DDP no_sync);
// stage 2 keeps only its gradient shard, so it reduce-scatters every
// micro-batch; the post-step parameter gather of stages 1-2 happens once.
std::vector<DpCollective> dp_collectives(int zero_stage) {
  switch (zero_stage) {
    case 0:
      return {{"gradient all-reduce", Op::all_reduce, true, 0, Pass::backward}};
    case 1:
      return {{"gradient reduce-scatter", Op::reduce_scatter, true, 0, Pass::backward},
              {"parameter all-gather", Op::all_gather, false, 0, Pass::forward}};
    case 2:
      return {{"gradient reduce-scatter", Op::reduce_scatter, true, 1, Pass::backward},
              {"parameter all-gather", Op::all_gather, false, 0, Pass::forward}};
    default:
      return {{"parameter all-gather (forward)", Op::all_gather, false, 1, Pass::forward},
              {"parameter all-gather (backward)", Op::all_gather, false, 1, Pass::backward},
              {"gradient reduce-scatter", Op::reduce_scatter, true, 1, Pass::backward}};
  }
}

// Gradient/parameter collectives go out in buckets (PyTorch DDP
// bucket_cap_mb, DeepSpeed reduce_bucket_size): each bucket is one call and
// pays the full latency term, which dominates at scale.
double bucket_calls(double bytes, double bucket_bytes, double minimum) {
  const double calls = bucket_bytes > 0 ? std::ceil(bytes / bucket_bytes) : 1.0;
  return std::max({calls, minimum, 1.0});
}

// DeepSpeed fetches a ZeRO-3 module's partitioned parameters when the module
// runs (PartitionedParameterCoordinator, one coalesced all-gather per
// module), prefetching the next modules up to stage3_prefetch_bucket_size
// elements. Going backward, module j from the end is reused after 2 j
// modules' worth of parameters; it stays live (no second gather) while that
// is within stage3_max_reuse_distance and the live ones fit
// stage3_max_live_parameters. Gradients go out in reduce_bucket_size
// buckets (DeepSpeed's config.py documents each key).
Zero3Calls zero3_calls(const Zero3Config& c, double params_per_gpu, int layers) {
  Zero3Calls z;
  z.modules = std::max(1.0, static_cast<double>(layers) * c.modules_per_layer);
  z.module_params = params_per_gpu / z.modules;
  z.forward_gathers = z.modules;
  const double by_reuse = std::floor(c.max_reuse_distance / (2.0 * z.module_params)) + 1.0;
  const double by_live = std::floor(c.max_live / z.module_params);
  z.kept_modules = std::clamp(std::min(by_reuse, by_live), 0.0, z.modules);
  z.backward_gathers = z.modules - z.kept_modules;
  z.prefetch_depth = c.prefetch_bucket > 0 ? std::max(1.0, std::floor(c.prefetch_bucket / z.module_params)) : 0.0;
  z.reduce_scatters = c.reduce_bucket > 0 ? std::max(1.0, std::ceil(params_per_gpu / c.reduce_bucket)) : 1.0;
  return z;
}

// Mixed-precision Adam keeps 2 (fp16/bf16 parameters) + 2 (gradients) + 12
// (fp32 parameters, momentum, variance) bytes per parameter (ZeRO, 3.1);
// Megatron-LM's fp32 main_grad buffer holds 4 bytes of gradient instead of 2
// (--accumulate-allreduce-grads-in-fp32). Stage 1 shards the 12 over DP,
// stage 2 also the gradients, stage 3 everything (ZeRO, 5, figure 1).
double model_state_bytes(double params_per_gpu, int zero_stage, int dp, double grad_bytes) {
  const double d = dp, g = grad_bytes;
  switch (zero_stage) {
    case 0: return (14.0 + g) * params_per_gpu;
    case 1: return (2.0 + g + 12.0 / d) * params_per_gpu;
    case 2: return (2.0 + (g + 12.0) / d) * params_per_gpu;
    default: return (14.0 + g) * params_per_gpu / d;
  }
}

// Activations of one layer for one micro-batch with tensor parallelism t:
// s*b*h*(10 + 24/t + 5*a*s/(h*t)) bytes at 16 bits, or s*b*h*(34/t +
// 5*a*s/(h*t)) with sequence parallelism (Korthikanti et al. 2022, table 2);
// flash attention (Dao et al. 2022) and selective recompute keep no a*s^2
// scores, dropping the last term. Full recompute stores only each layer's
// input (2*s*b*h, /t with sequence parallelism) plus one layer's activations
// while it is recomputed. 1F1B keeps up to p micro-batches in flight on the
// first stage (Narayanan et al. SC 2021, 2.2.1; Korthikanti 4.2.3).
double activation_bytes(const ActivationShape& a) {
  const double sbh = static_cast<double>(a.seq_len) * a.micro_batch * a.hidden;
  const double scale = a.act_bytes / 2.0;
  const double t = a.tp;
  double per_layer = a.sequence_parallel ? sbh * 34.0 / t : sbh * (10.0 + 24.0 / t);
  if (!a.flash_attention && a.recompute != Recompute::selective)
    per_layer += sbh * 5.0 * a.heads * a.seq_len / (a.hidden * t);
  per_layer *= scale;
  const double in_flight = a.pp > 1 ? std::min(a.pp, a.micro_batches) : 1;
  if (a.recompute != Recompute::full) return a.layers_per_stage * in_flight * per_layer;
  const double input = 2.0 * sbh * scale / (a.sequence_parallel ? t : 1.0);
  return a.layers_per_stage * in_flight * input + per_layer;
}

}  // namespace fb::model
