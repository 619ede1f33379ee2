// One training step on a cluster: compute, every collective at its scope,
// the pipeline bubble, what overlaps and what is exposed, and the figures a
// buyer compares (communication share, effective efficiency, MFU, and the
// network bandwidth that would hide the communication).
#pragma once

#include <string>
#include <vector>

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
  double fixed_us = 0;          // per step: the part that does not depend on the network's bandwidth
  // The weakest basis of its phases at each level; the table shows the
  // network's (inter) when it crosses nodes.
  Basis intra_basis = Basis::preset;
  Basis inter_basis = Basis::preset;
  Basis basis() const { return where == "intra" ? intra_basis : inter_basis; }
};

struct StepCost {
  Parallel parallel;
  std::string gpu, node, network;  // labels
  double network_line_gbps = 0;     // per node, 0 when measured
  double network_bw_gbps = 0;       // achievable per node
  double tokens = 0;                // per step
  double model_flops = 0;           // per step, all GPUs
  double compute_us = 0;            // ideal: hardware FLOPs at the achieved rate
  double bubble_us = 0;
  double comm_us = 0;
  double exposed_us = 0;
  double step_us = 0;
  double comm_share = 0;     // communication / (compute + bubble + communication): nothing overlapped
  double exposed_share = 0;  // exposed communication / step
  double efficiency = 0;     // compute / step
  double mfu = 0;
  double inter_wire_bytes = 0;  // per node per step
  // Achievable network bandwidth per node that would hide all communication
  // under the compute (full overlap): 0 when nothing crosses nodes, infinity
  // when the latency and intra-node terms alone exceed the compute.
  double hide_gbps = 0;
  double memory_bytes = 0;  // per GPU at the workload's ZeRO stage (model/memory.hpp)
  double memory_capacity_bytes = 0;
  std::vector<CommItem> items;
};

// The fabric of the workload's cluster: its node preset (or the GPU's default
// node, or a results file) inside, `network` between nodes ("" is allowed on
// one node only). Relative results paths are taken from `base_dir`.
Fabric fabric_for(const Workload& w, std::string_view network, const Presets& presets,
                  const std::string& base_dir = "");

// Compute rate: the workload's tflops (scaled by peak to another GPU than the
// workload's own) or its MFU times this GPU's peak.
StepCost predict_step(const Workload& w, const Fabric& fabric, const Presets& presets);

// The same job (same global batch) on other node counts: dp follows the GPUs.
// A node count the batch or the degrees cannot use gets `why` instead.
struct ScalePoint {
  int nodes = 0;
  std::string why;  // "" when predicted
  StepCost step;
};
std::vector<ScalePoint> predict_scaling(const Workload& w, const Fabric& fabric, const Presets& presets,
                                        const std::vector<int>& node_counts);

}  // namespace fb::model
