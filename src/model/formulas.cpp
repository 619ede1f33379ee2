// The model's formulas, each with its source. Sizes follow nccl-tests'
// convention (docs/results-schema.md): per-rank buffer for all_reduce and
// sendrecv, the whole gathered buffer for all_gather and reduce_scatter.
#include "fabricbench/model/formulas.hpp"

#include <algorithm>
#include <cmath>

#include "fabricbench/core/layout.hpp"
#include "fabricbench/core/op_desc.hpp"

namespace fb::model {

namespace {
constexpr double kBytesPerUsPerGbps = 1e3;  // 1 GB/s = 1e3 bytes per microsecond
}

// Ring algorithms (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms
// for clusters of workstations", JPDC 2009; Thakur, Rabenseifner & Gropp,
// "Optimization of collective communication operations in MPICH", IJHPCA
// 2005): all-reduce = reduce-scatter + all-gather, n-1 hops each; a pipelined
// chain broadcast or reduce also pays n-1 hops of latency; point-to-point one.
int ring_steps(Op op, int nranks) {
  switch (op_desc(op).steps) {
    case StepsRule::one:
      return 1;
    case StepsRule::ring:
      return nranks <= 1 ? 0 : nranks - 1;
    case StepsRule::double_ring:
      return nranks <= 1 ? 0 : 2 * (nranks - 1);
  }
  return 1;  // not reached
}

// T = steps * alpha + busbw_factor * S / B: the bandwidth term is the
// definition of nccl-tests' busbw (busbw = factor * S / T tends to B).
double ring_time_us(Op op, int nranks, double bytes, double alpha_us, double bw_gbps) {
  const int steps = ring_steps(op, nranks);
  if (steps == 0) return 0.0;
  return steps * alpha_us + ring_wire_bytes(op, nranks, bytes) / (bw_gbps * kBytesPerUsPerGbps);
}

double ring_wire_bytes(Op op, int nranks, double bytes) {
  switch (op_desc(op).wire) {
    case WireRule::message:
      return bytes;
    case WireRule::bus:
      return nranks <= 1 ? 0.0 : busbw_factor(op, nranks) * bytes;
  }
  return bytes;  // not reached
}

// Hierarchical (two-level) collectives, as in Horovod's hierarchical
// all-reduce (Sergeev & Del Balso, arXiv:1802.05799) and the 2D scheme of
// Jia et al. (arXiv:1807.11205): reduce-scatter inside the node over
// NVLink/PCIe, all-reduce of each GPU's 1/g share across nodes on its rail,
// all-gather inside the node. The g rails of a node (and every other group
// doing the same at the same time, `sharing`) cross the node's NICs together:
// g rails of S/g bytes at B/g each take as long as one collective of S bytes
// at B, so an inter-node phase is priced at node level on the node's
// aggregate bytes, with its latency counted once.
std::vector<Phase> hierarchical_phases(Op op, double bytes, const GroupShape& s) {
  const double node_bytes = bytes * s.sharing;
  if (s.nodes <= 1) return {{Level::intra, op, s.per_node, bytes}};
  if (s.per_node <= 1) return {{Level::inter, op, s.nodes, node_bytes}};
  switch (op_desc(op).two_level) {
    case TwoLevel::all_reduce:
      return {{Level::intra, Op::reduce_scatter, s.per_node, bytes},
              {Level::inter, Op::all_reduce, s.nodes, node_bytes},
              {Level::intra, Op::all_gather, s.per_node, bytes}};
    case TwoLevel::gather_rails:  // gather across nodes on each rail, then inside the node
      return {{Level::inter, Op::all_gather, s.nodes, node_bytes}, {Level::intra, Op::all_gather, s.per_node, bytes}};
    case TwoLevel::scatter_rails:  // the mirror image
      return {{Level::intra, Op::reduce_scatter, s.per_node, bytes},
              {Level::inter, Op::reduce_scatter, s.nodes, node_bytes}};
    case TwoLevel::flat:
      break;
  }
  return {{Level::inter, op, s.nodes, node_bytes}};
}

// 6N per token for the forward and backward matmuls (Kaplan et al., "Scaling
// laws for neural language models", 2020) plus attention's 12*L*h*s (Chowdhery
// et al., PaLM, 2022, appendix B): the model FLOPs that MFU counts.
double model_flops_per_token(double params, int layers, int hidden, int seq_len) {
  return 6.0 * params + 12.0 * layers * static_cast<double>(hidden) * seq_len;
}

// Full recompute runs the forward twice: 8N instead of 6N (Narayanan et al.,
// "Efficient large-scale language model training on GPU clusters using
// Megatron-LM", SC 2021, eq. 3: 96 instead of 72).
double recompute_factor(bool recompute) { return recompute ? 4.0 / 3.0 : 1.0; }

// Backward = 2x forward (Kaplan et al. 2020); with recompute the backward pass
// also re-runs the forward: 3 of 4 parts.
double backward_share(bool recompute) { return recompute ? 3.0 / 4.0 : 2.0 / 3.0; }

// Megatron-LM tensor parallelism (Shoeybi et al., arXiv:1909.08053, fig. 4):
// per transformer layer two all-reduces in the forward (after attention and
// after the MLP) and two in the backward, each of b*s*h activations; full
// recompute repeats the forward's two (Korthikanti et al., "Reducing
// activation recomputation in large transformer models", MLSys 2023).
int tp_allreduces_per_layer(bool recompute) { return recompute ? 6 : 4; }

double tp_allreduce_bytes(int micro_batch, int seq_len, int hidden, double act_bytes) {
  return static_cast<double>(micro_batch) * seq_len * hidden * act_bytes;
}

// Pipeline bubble of 1F1B over the ideal compute: (p-1)/m; interleaving v
// model chunks per stage divides it by v (Narayanan et al. SC 2021, 2.2).
double bubble_fraction(int pp, int virtual_stages, int micro_batches) {
  return pp <= 1 ? 0.0 : static_cast<double>(pp - 1) / (static_cast<double>(virtual_stages) * micro_batches);
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

// Mixed-precision Adam keeps 2 (fp16/bf16 parameters) + 2 (gradients) + 12
// (fp32 parameters, momentum, variance) bytes per parameter (ZeRO, 3.1);
// stage 1 shards the 12 over DP, stage 2 also the gradients, stage 3 all 16
// (ZeRO, 5, figure 1).
double model_state_bytes(double params_per_gpu, int zero_stage, int dp) {
  const double d = dp;
  switch (zero_stage) {
    case 0: return 16.0 * params_per_gpu;
    case 1: return (4.0 + 12.0 / d) * params_per_gpu;
    case 2: return (2.0 + 14.0 / d) * params_per_gpu;
    default: return 16.0 * params_per_gpu / d;
  }
}

// Activations of one layer for one micro-batch with tensor parallelism t and
// no sequence parallelism: s*b*h*(10 + 24/t + 5*a*s/(h*t)) bytes at 16 bits
// (Korthikanti et al. MLSys 2023, table 2); flash attention (Dao et al. 2022)
// keeps no a*s^2 scores, dropping the last term. Full recompute stores only
// each layer's input (2*s*b*h) plus one layer's activations while it is
// recomputed. 1F1B keeps up to p micro-batches in flight on the first stage
// (Narayanan et al. SC 2021, 2.2.1; Korthikanti 4.2.3).
double activation_bytes(const ActivationShape& a) {
  const double sbh = static_cast<double>(a.seq_len) * a.micro_batch * a.hidden;
  const double scale = a.act_bytes / 2.0;
  const double t = a.tp;
  double per_layer = sbh * (10.0 + 24.0 / t);
  if (!a.flash_attention) per_layer += sbh * 5.0 * a.heads * a.seq_len / (a.hidden * t);
  per_layer *= scale;
  const double in_flight = a.pp > 1 ? std::min(a.pp, a.micro_batches) : 1;
  if (!a.recompute) return a.layers_per_stage * in_flight * per_layer;
  return a.layers_per_stage * in_flight * 2.0 * sbh * scale + per_layer;
}

}  // namespace fb::model
