// A training workload as the model sees it, read from YAML
// (profiles/workloads/*.yaml; keys in docs/model.md#workload).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fb::model {

// Fractions (0..1) of a compute window that can hide a kind of
// communication. 0 = exposed: nothing is assumed to overlap unless stated.
struct Overlap {
  double grad_reduce = 0;   // gradient all-reduce / reduce-scatter under the backward pass
  double param_gather = 0;  // parameter all-gathers under the neighbouring layer (ZeRO prefetch)
  double tp = 0;            // tensor-parallel all-reduces under compute
  double pp = 0;            // pipeline sends under compute
};

struct ClusterSpec {
  std::string gpu;      // GPU preset name
  int nodes = 1;
  int gpus_per_node = 8;
  std::string node;     // node preset or results file; "" = the GPU's default node preset
  std::string network;  // network preset or results file; "" = none given
};

struct Workload {
  std::string name;
  // model
  double params = 0;
  int layers = 0;
  int hidden = 0;
  int heads = 0;  // default hidden / 128
  int seq_len = 0;
  // training
  int global_batch = 0;  // sequences per step
  int micro_batch = 0;   // sequences per GPU per micro-step
  std::string dtype = "bf16";  // training dtype: picks the GPU's bf16 or fp16 peak
  double param_bytes = 2;  // dtype of parameters on the wire
  double grad_bytes = 2;   // dtype of gradients on the wire
  double act_bytes = 2;    // dtype of activations
  bool recompute = false;
  bool flash_attention = true;
  double tokens = 0;  // job length in tokens; 0 = not given
  // parallelism
  int tp = 1;
  int pp = 1;
  int dp = 0;  // 0 = the GPUs left over: gpus / (tp * pp)
  int virtual_stages = 1;
  int zero = 0;
  std::uint64_t bucket_bytes = 25ull << 20;  // PyTorch DDP's default bucket_cap_mb = 25
  // compute: exactly one of these
  double tflops = 0;  // achieved hardware TFLOP/s per GPU (recompute included)
  double mfu = 0;     // model FLOPs utilisation
  std::string compute_gpu;  // the GPU `tflops` was achieved on (the workload's own)
  ClusterSpec cluster;
  Overlap overlap;

  double tokens_per_step() const { return static_cast<double>(global_batch) * seq_len; }
};

// Throws fb::UsageError naming the key ("workload: parallel: tp") for unknown
// keys, missing fields, bad units and inconsistent values.
Workload parse_workload(std::string_view yaml_text);

// Reads and parses a file; errors name the file.
Workload load_workload(const std::string& path);

// The degrees on a cluster of `nodes` x `gpus_per_node`.
struct Parallel {
  int gpus = 1;
  int nodes = 1;
  int gpus_per_node = 1;
  int dp = 1;
  int tp = 1;
  int pp = 1;
  int virtual_stages = 1;
  int micro_batches = 1;  // per step per DP replica
};

// Checks that the degrees divide the GPUs, whole nodes and the batch; throws
// fb::UsageError saying which does not and what would.
Parallel resolve_parallel(const Workload& w);

}  // namespace fb::model
