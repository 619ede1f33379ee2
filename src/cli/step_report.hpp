// What `fabricbench step` prints and records: the measurement, and the
// model's prediction for the same step beside it.
#pragma once

#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/workload.hpp"
#include "fabricbench/step/executor.hpp"

namespace fb::cli {

struct Prediction {
  std::string basis;  // "workload rate" or "measured compute"
  std::string network;
  std::string node;
  double compute_us = 0;
  double comm_us = 0;
  double exposed_us = 0;
  double step_us = 0;  // without the pipeline bubble (the executor runs none)
  double comm_share = 0;
  double exposed_share = 0;
  double efficiency = 0;
  double step_diff_pct = 0;  // (predicted - measured) / measured step
};

struct StepView {
  const model::Workload& workload;
  const step::StepSchedule& schedule;
  const step::StepReport& report;
  std::string kernel;
  std::string backend;
  std::vector<Prediction> predictions;
};

// The workload's compute rate scaled to what the step measured.
double calibration_factor(const StepView& v);

// The model on `network` / `node` (as `fabricbench model step` takes them),
// once at the workload's stated compute rate and once at the measured one.
std::vector<Prediction> predictions_for(const model::Workload& w, const step::StepReport& r,
                                        const model::Presets& presets, const std::string& network,
                                        const std::string& node);

std::string step_text(const StepView& v);
// The `step` line and one `step_model` line per prediction.
std::vector<RecordLine> step_lines(const StepView& v);

}  // namespace fb::cli
