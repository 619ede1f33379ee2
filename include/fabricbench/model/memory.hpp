// Does the workload fit in each GPU's memory, per ZeRO stage, and if not,
// what is the smallest data-parallel or tensor-parallel degree that fits?
#pragma once

#include <vector>

#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/workload.hpp"

namespace fb::model {

struct MemoryFit {
  int zero = 0;
  double states_bytes = 0;      // parameters, gradients, Adam states (16 B/param before sharding,
                                // 18 with an fp32 main_grad)
  double gathered_bytes = 0;    // ZeRO-3: gathered parameters live at once (stage3_max_live_parameters)
  double activation_bytes = 0;
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
  int smallest_dp = 0;  // at the workload's tp and pp; 0 = none (ZeRO-0 does not shard)
  int smallest_tp = 0;  // on the same GPUs (dp shrinks); 0 = none up to the node size
};

// Stages 0 to 3 for the workload on `gpu`. Not counted: embeddings' extra
// activations, temporary buffers, allocator fragmentation, the CUDA context.
std::vector<MemoryFit> memory_fit(const Workload& w, const GpuPreset& gpu);

}  // namespace fb::model
