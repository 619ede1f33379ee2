// One training step on a cluster: compute, every collective priced as NCCL's
// tuner prices it (model/collective.hpp), the pipeline bubble and stage
// imbalance, what overlaps and what is exposed, and the figures a buyer
// compares (communication share, effective efficiency, MFU, and the network
// bandwidth that brings the exposed share under a target).
#pragma once

#include <string>
#include <vector>

#include "fabricbench/model/collective.hpp"
#include "fabricbench/model/fabric.hpp"
#include "fabricbench/model/memory.hpp"
#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/workload.hpp"

namespace fb::model {

struct CommItem {
  std::string name;   // "DP gradient all-reduce"
  std::string group;  // tp, dp, pp
  Op op = Op::all_reduce;
  std::string where;  // intra, inter, intra+inter
  int ranks = 1;      // ranks in the group
  double bytes_per_call = 0;
  double calls = 0;  // per step
  double time_per_call_us = 0;
  double total_us = 0;
  double window_us = 0;  // compute that may hide it (overlap fraction x pass)
  double exposed_us = 0;
  double inter_wire_bytes = 0;  // per node per step, one direction
  // How one call is priced: NCCL's algorithm and protocol, or a measured
  // curve, with the numbers.
  Basis basis = Basis::preset;
  std::string algorithm, protocol, formula;
  double latency_us = 0;
  double busbw_gbps = 0;
};

// The default exposed share that the bandwidth target aims under.
inline constexpr double kDefaultExposedTarget = 0.05;

struct StepCost {
  Parallel parallel;
  std::string gpu, node, network;  // labels ("8x400g-ndr-ib": NICs per node always in it)
  double network_line_gbps = 0;     // per node, 0 when measured
  double network_bw_gbps = 0;       // achievable per node
  double tokens = 0;                // per step (samples for a model without a sequence)
  double model_flops = 0;           // per step, all GPUs
  double rate_tflops = 0;           // achieved hardware TFLOP/s per GPU the compute runs at
  // Where that rate came from: mfu, stated_tflops, measured_curve (a `gemm`
  // record), stated_curve or preset_curve (the GPU's published curve).
  std::string compute_source;
  double compute_us = 0;            // ideal: hardware FLOPs at the achieved rate
  // Of it, attention's score and value products in flash attention's kernel
  // at the GPU's attention curve (model/attention.hpp); 0 where they run at
  // the rate above. Not written in records.
  double attention_us = 0;
  // The memory-bound work beside the products (norms, activations, residual
  // adds, the optimizer step; model/non_gemm.hpp) at the GPU's memory
  // bandwidth, per GPU per step; 0 where the rate is a whole step's (mfu,
  // stated_tflops) or the GPU's preset gives no memory bandwidth.
  double non_gemm_us = 0;
  double optimizer_us = 0;          // the optimizer step's part of it, once per step after the pipeline drains
  double non_gemm_bytes = 0;        // per GPU per step, read and written
  double imbalance_us = 0;          // the fullest pipeline stage's extra compute (uneven layers)
  double bubble_us = 0;
  double comm_us = 0;
  double exposed_us = 0;
  double step_us = 0;
  double comm_share = 0;     // communication / (compute + bubble + communication): nothing overlapped
  double exposed_share = 0;  // exposed communication / step
  double efficiency = 0;     // (compute + non-GEMM work) / step
  double mfu = 0;
  double inter_wire_bytes = 0;  // per node per step
  // The achievable network bandwidth per node that brings the exposed share
  // to at most `exposed_target` with the workload's own overlap windows: 0
  // when nothing crosses nodes, infinity when no bandwidth does (then
  // `exposed_floor` is the share left with an infinitely fast network).
  double exposed_target = kDefaultExposedTarget;
  double target_gbps = 0;
  double exposed_floor = 0;
  double memory_bytes = 0;  // per GPU at the workload's ZeRO stage (model/memory.hpp)
  double memory_capacity_bytes = 0;
  std::vector<CommItem> items;
  // Every input that moves the answer, in words: algorithms, NICs, links,
  // compute rate, overlap, buckets, the target.
  std::vector<std::string> assumptions;
  // Where the model is known to fall short for this kind of workload, with
  // the published runs that show it (docs/model.md, "Validation").
  std::vector<std::string> caveats;
};

// How much longer the published ZeRO-3 steps the model is held to took than
// it predicts (Narayanan et al., SC 2021, Table 2: DeepSpeed ZeRO-3, 175B,
// 384 to 1536 A100s at a fixed batch): published / predicted step time, at
// the fewest and at the most GPUs. tests/model/published_test.cpp keeps
// them equal to that table's rows.
inline constexpr double kZero3PublishedOverPredictedFewest = 1.26;
inline constexpr double kZero3PublishedOverPredictedMost = 4.11;
// The share of NCCL's bus bandwidth (workload busbw_share: dp) that brings
// the model to the published step at 1536 GPUs, the most communication-bound
// of those rows; the test predicts the other two with it.
inline constexpr double kZero3PublishedBusbwShare = 0.094;

// The fabric of the workload's cluster: its node preset (or the GPU's default
// node, or a results file) inside, `network` between nodes ("" is allowed on
// one node only). Relative results paths are taken from `base_dir`.
Fabric fabric_for(const Workload& w, std::string_view network, const Presets& presets,
                  const std::string& base_dir = "");

// Compute rate: the workload's tflops or GEMM curve (scaled by peak to
// another GPU than the workload's own) or its MFU times this GPU's peak.
// Throws fb::UsageError when the numbers make the step not finite.
StepCost predict_step(const Workload& w, const Fabric& fabric, const Presets& presets,
                      double exposed_target = kDefaultExposedTarget);

// The same job (same global batch) on other node counts: dp follows the GPUs.
// A node count the batch or the degrees cannot use gets `why` instead.
struct ScalePoint {
  int nodes = 0;
  std::string why;  // "" when predicted
  StepCost step;
};
std::vector<ScalePoint> predict_scaling(const Workload& w, const Fabric& fabric, const Presets& presets,
                                        const std::vector<int>& node_counts,
                                        double exposed_target = kDefaultExposedTarget);

}  // namespace fb::model
