// Mixed GPU generations in one job (issue 25): synchronous data parallelism
// runs at the slowest rank's compute, so the faster cards wait at every
// gradient synchronisation; a pipeline can instead give the faster cards more
// layers. Both predicted from the uniform step of each GPU model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/model/step.hpp"

namespace fb {
struct Results;
}

namespace fb::model {

// "a100-80gb:8,rtx-4090:8": GPU preset and how many GPUs of it, in the order
// of the pipeline's stages. Throws fb::UsageError naming `what` for an empty
// mix, a bad count or an unknown preset.
struct GpuGroup {
  std::string gpu;
  int count = 0;
};
std::vector<GpuGroup> parse_gpu_mix(std::string_view text, const Presets& presets, std::string_view what);

// The mix a record's inventory holds (a `topo --out` or `run --out` record):
// each node's GPUs counted once, mapped to presets by their nvml_names, in
// the order the record meets each model. Throws fb::UsageError naming `what`
// and the file when it holds no inventory, no GPU model, or a model that no
// preset names.
std::vector<GpuGroup> gpu_mix_of(const Results& record, const Presets& presets, std::string_view what);

struct MixedGroup {
  GpuGroup group;
  StepCost uniform;     // the step on a cluster of this model only
  double busy_us = 0;   // compute, stage imbalance and bubble of one step on this model
  double wait_us = 0;   // per step: the slowest group's busy time minus this one's
  double wait_share = 0;  // wait / the mixed data-parallel step
};

// A split of the layers over one pipeline stage per group.
struct PipelineSplit {
  std::vector<int> layers;       // per stage
  std::vector<double> stage_us;  // per stage: its layers' compute per step on its GPUs
  double bubble_us = 0;          // (stages-1)/micro_batches of the slowest stage
  double step_us = 0;            // the slowest stage plus the bubble
};

struct MixedStep {
  std::vector<MixedGroup> groups;
  std::size_t slowest = 0;  // index into groups
  double dp_step_us = 0;    // the slowest group's uniform step
  bool has_pipeline = false;
  std::string no_pipeline;  // why, when !has_pipeline
  PipelineSplit uniform, proportional;
  int micro_batches = 1;
};

// `fabric` is the workload's (its network and node); the mix's counts must
// add up to the workload's GPUs.
MixedStep predict_mixed(const Workload& w, const std::vector<GpuGroup>& mix, const Fabric& fabric,
                        const Presets& presets, double exposed_target = kDefaultExposedTarget);

// Layers per stage: even (floor/ceil, the extra ones first), or in proportion
// to `weights` (largest remainders), each stage at least one.
std::vector<int> even_layers(int layers, std::size_t stages);
std::vector<int> proportional_layers(int layers, const std::vector<double>& weights);

}  // namespace fb::model
