// What `fabricbench step` prints and records: the measurement, and the
// model's prediction for the same step beside it (step/prediction.hpp makes
// the prediction; this only prints and records it).
#pragma once

#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/model/workload.hpp"
#include "fabricbench/step/executor.hpp"
#include "fabricbench/step/prediction.hpp"
#include "step_products.hpp"

namespace fb::cli {

struct StepView {
  const model::Workload& workload;
  const step::StepSchedule& schedule;
  const step::StepReport& report;
  std::string kernel;
  std::string backend;
  std::vector<step::Prediction> predictions;
  const LayerProducts* products = nullptr;  // the GPU step's, measured before the step
};

std::string step_text(const StepView& v);
// The `step` line and one `step_model` line per prediction.
std::vector<RecordLine> step_lines(const StepView& v);

}  // namespace fb::cli
