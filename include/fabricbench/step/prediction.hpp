// The model's prediction for the step the executor measured, to set beside
// the measurement: once at the workload's stated compute rate and once at the
// rate the step measured, so what is left between the second and the
// measurement is the network's (and the overlap's) share.
#pragma once

#include <string>
#include <vector>

#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/workload.hpp"
#include "fabricbench/step/executor.hpp"
#include "fabricbench/step/schedule.hpp"

namespace fb::step {

struct Prediction {
  std::string basis;  // "workload rate" or "measured compute"
  std::string network;
  std::string node;
  double compute_us = 0;   // the products
  double non_gemm_us = 0;  // memory-bound work, the optimizer's included (model/step.hpp)
  double optimizer_us = 0;
  double comm_us = 0;
  double exposed_us = 0;
  double step_us = 0;  // compute + non-GEMM + exposed: without the pipeline bubble (the executor runs none)
  double comm_share = 0;
  double exposed_share = 0;
  double efficiency = 0;
  double step_diff_pct = 0;  // (predicted - measured) / measured step
  double attention_us = 0;   // of compute_us: attention's kernel at its own curve (0 without one)
};

// The model on `network` / `node` (as `fabricbench model step` takes them;
// "" keeps the workload's), once at the workload's stated compute rate and
// once at the one that gives the measured products' time. UsageError when the
// fabric cannot be made.
std::vector<Prediction> predictions_for(const model::Workload& w, const StepReport& measured,
                                        const model::Presets& presets, const std::string& network,
                                        const std::string& node);

// What the workload's compute rate is multiplied by to run at the measured
// pace: the planned products' time over the measured one, attention's kernel
// (where its GPU has a curve) kept at its own curve's time.
double calibration_factor(const StepSchedule& planned, const StepReport& measured);

}  // namespace fb::step
