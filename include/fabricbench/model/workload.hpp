// A training workload as the model sees it, read from YAML
// (profiles/workloads/*.yaml; keys in docs/model.md#workload).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fabricbench/model/formulas.hpp"

namespace fb::model {

// Fractions (0..1) of a compute window that can hide a kind of
// communication. 0 = exposed: nothing is assumed to overlap unless stated.
struct Overlap {
  double grad_reduce = 0;   // gradient all-reduce / reduce-scatter under the backward pass
  double param_gather = 0;  // parameter all-gathers under the neighbouring layer (ZeRO prefetch)
  double tp = 0;            // tensor-parallel all-reduces under compute
  double pp = 0;            // pipeline sends under compute
};

// Shares (0..1] of the bus bandwidth NCCL's tuner prices that a framework's
// collectives reach, per group; the latency term is kept. 1 = NCCL's own
// (the default): a framework's losses are not modelled unless stated. The
// published DeepSpeed ZeRO-3 runs of 2021 reached 0.094 of it over the
// network (docs/model.md, "Validation").
struct BusbwShare {
  double tp = 1;
  double dp = 1;
  double pp = 1;
  // By group name ("tp", "dp", "pp"); throws fb::UsageError naming them.
  double& of(std::string_view group);
  double of(std::string_view group) const { return const_cast<BusbwShare*>(this)->of(group); }
};

struct ClusterSpec {
  std::string gpu;      // GPU preset name
  int nodes = 1;
  int gpus_per_node = 8;
  std::string node;     // node preset or results file; "" = the GPU's default node preset
  std::string network;  // network spec ("8x400g-ndr-ib") or results file; "" = none given
};

// A compute rate that follows the size of the workload's matrix products:
// TFLOP/s of square GEMMs by size (from `fabricbench gemm --out` records or
// stated), times the share of it the step reaches (the calibration): for a
// transformer the share its products reach, its non-GEMM work priced beside
// them (model/non_gemm.hpp).
struct GemmCurve {
  // One measured product shape: what `fabricbench gemm --shapes-of` records.
  struct Shape {
    long long m = 0, n = 0, k = 0;
    double tflops = 0;
  };
  std::vector<std::pair<double, double>> points;  // (cube root of m n k, TFLOP/s), ascending sizes
  std::vector<Shape> shapes;  // every shape of the record, as measured (the slowest rank's); none when stated
  double of_gemm = 0;     // achieved rate / GEMM rate at the workload's size
  double size = 0;        // the workload's GEMM size (cube root of m n k); 0 = from the model's shape
  std::string source;     // "stated", "preset" (the priced GPU's preset curve) or the record's path
  std::string measured_gpu;  // a record's GPU as NVML names it ("NVIDIA H200"); "" when stated or unnamed
  bool preset() const { return source == "preset"; }
  bool empty() const { return points.empty(); }
};

// What the job reads from its dataset: bytes per sample (stated, or tokens
// per sample x bytes per token) and how the loader reads them.
struct DataSpec {
  double bytes_per_sample = 0;    // 0 = not given
  std::string pattern = "seq_read";  // seq_read: large shards; small_read: a file per sample
  bool given() const { return bytes_per_sample > 0; }
};

struct Workload {
  std::string name;
  // model: a transformer (layers, hidden, heads, seq_len), or any network
  // given by its forward FLOPs per sample (CNNs, recommender towers)
  double params = 0;
  int layers = 0;
  int hidden = 0;
  int heads = 0;  // default hidden / 128
  int seq_len = 0;
  int vocab = 0;        // vocabulary size: the loss's logits per token; 0 = not given (the loss not priced)
  bool rotary = false;  // rotary position embeddings applied to the query and key in every layer
  double forward_flops_per_sample = 0;   // > 0: not a transformer; seq_len is 1 (a sample)
  double activation_bytes_per_sample = 0;  // such a model's activations, when stated
  bool transformer() const { return forward_flops_per_sample <= 0; }
  // training
  int global_batch = 0;  // sequences (samples) per step
  int micro_batch = 0;   // sequences per GPU per micro-step
  std::string dtype = "bf16";  // training dtype: picks the GPU's bf16 or fp16 peak
  double param_bytes = 2;  // dtype of parameters on the wire
  double grad_bytes = 2;   // dtype of gradients on the wire
  double grad_memory_bytes = 2;  // gradient buffer per parameter: 4 with an fp32 main_grad
  double act_bytes = 2;    // dtype of activations
  Recompute recompute = Recompute::none;
  bool flash_attention = true;
  double dropout = 0;  // dropout probability; 0 = none (MPT and GPT-style pretraining runs without)
  double tokens = 0;  // job length in tokens; 0 = not given
  // parallelism
  int tp = 1;
  int pp = 1;
  int dp = 0;  // 0 = the GPUs left over: gpus / (tp * pp)
  int virtual_stages = 1;
  int zero = 0;
  bool sequence_parallel = false;   // Megatron's: activations split over tp (memory)
  bool pp_scatter_gather = true;    // Megatron's: each TP rank sends 1/tp of a stage's activations
  std::uint64_t bucket_bytes = 25ull << 20;  // PyTorch DDP's default bucket_cap_mb = 25 (Horovod: fusion buffer)
  Zero3Config zero3;
  // compute: exactly one of these
  double tflops = 0;  // achieved hardware TFLOP/s per GPU (recompute included)
  double mfu = 0;     // model FLOPs utilisation
  GemmCurve gemm;
  std::string compute_gpu;  // the GPU `tflops` or the GEMM curve was measured on (the workload's own)
  ClusterSpec cluster;
  Overlap overlap;
  BusbwShare busbw_share;
  DataSpec data;

  double tokens_per_step() const { return static_cast<double>(global_batch) * (transformer() ? seq_len : 1); }
};

// Throws fb::UsageError naming the key ("workload: parallel: tp") for unknown
// keys, missing fields, bad units and inconsistent values. A GEMM curve
// given as a file is read relative to `base_dir` ("" = as is).
Workload parse_workload(std::string_view yaml_text, const std::string& base_dir = "");

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
  int stage_layers = 0;   // layers of the fullest pipeline stage
};

// Checks that the degrees divide the GPUs, whole nodes and the batch; throws
// fb::UsageError saying which does not and what would.
Parallel resolve_parallel(const Workload& w);

// Parameters per GPU before ZeRO sharding: the fullest stage's share of the
// layers, over tp.
double params_per_gpu(const Workload& w, const Parallel& p);

}  // namespace fb::model
