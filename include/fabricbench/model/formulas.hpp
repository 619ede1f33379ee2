// Every formula of the model in one place, each with where it comes from
// (src/model/formulas.cpp cites them; docs/model.md explains them).
// Units: bytes, microseconds, GB/s (1e9 bytes/s), FLOPs.
#pragma once

#include <vector>

#include "fabricbench/core/types.hpp"

namespace fb::model {

// ---- Collectives on a ring ------------------------------------------------

// Sequential message hops of a ring algorithm on n ranks (the alpha count).
int ring_steps(Op op, int nranks);

// Ring time of `bytes` (nccl-tests size convention) on n ranks over a link of
// per-hop latency alpha and per-rank bandwidth B: steps*alpha + factor*S/B,
// factor = fb::busbw_factor (2(n-1)/n for all_reduce, (n-1)/n for
// all_gather/reduce_scatter, 1 for sendrecv).
double ring_time_us(Op op, int nranks, double bytes, double alpha_us, double bw_gbps);

// Bytes each rank (or node, for a node-level phase) sends per direction.
double ring_wire_bytes(Op op, int nranks, double bytes);

// ---- Hierarchical collectives ----------------------------------------------

enum class Level { intra, inter };

// How a group of ranks sits on the nodes: `per_node` members on each of
// `nodes` nodes; `sharing` groups like it run the same collective at the same
// time on each node (they share its NICs).
struct GroupShape {
  int per_node = 1;
  int nodes = 1;
  int sharing = 1;
};

// One phase of a hierarchical collective. Inter-node phases are priced at node
// level: `bytes` is the node's aggregate over its concurrent rails.
struct Phase {
  Level level = Level::intra;
  Op op = Op::all_reduce;
  int nranks = 1;
  double bytes = 0;
};

// The phases of `op` on `bytes` (nccl-tests convention) over a group shape.
std::vector<Phase> hierarchical_phases(Op op, double bytes, const GroupShape& shape);

// ---- Compute ----------------------------------------------------------------

// Model FLOPs per token: 6*params + 12*layers*hidden*seq_len.
double model_flops_per_token(double params, int layers, int hidden, int seq_len);
// Hardware FLOPs over model FLOPs: 4/3 with full activation recompute.
double recompute_factor(bool recompute);
// Share of the hardware FLOPs spent in the backward pass (the window that
// can hide gradient reduction): 2/3, or 3/4 with recompute.
double backward_share(bool recompute);

// ---- Parallelism volumes ----------------------------------------------------

// Tensor parallel all-reduces per layer per micro-batch: 4, 6 with recompute.
int tp_allreduces_per_layer(bool recompute);
// Their size: b*s*h activations.
double tp_allreduce_bytes(int micro_batch, int seq_len, int hidden, double act_bytes);
// Pipeline: bubble over ideal compute, (p-1)/(v*m).
double bubble_fraction(int pp, int virtual_stages, int micro_batches);
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

// ---- Memory -----------------------------------------------------------------

// Parameters, gradients and Adam states per GPU for a ZeRO stage, mixed
// precision: 2 + 2 + 12 bytes per parameter before sharding.
double model_state_bytes(double params_per_gpu, int zero_stage, int dp);
// Activations per GPU.
struct ActivationShape {
  int micro_batch, seq_len, hidden, heads, layers_per_stage, tp, pp, micro_batches;
  double act_bytes;
  bool recompute, flash_attention;
};
double activation_bytes(const ActivationShape& a);

}  // namespace fb::model
