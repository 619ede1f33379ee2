// The step the model predicts for a workload, turned into a schedule the
// executor runs: the same collectives, sizes, call counts and overlap
// windows, so measurement and prediction describe one step.
#pragma once

#include "fabricbench/model/step.hpp"
#include "fabricbench/step/schedule.hpp"

namespace fb::step {

// The pipeline bubble is left out (the executor runs one stage's compute;
// compare against the prediction without its bubble). PP sends run as a
// sendrecv ring over the stages of a pipeline. The model's non-GEMM work
// comes with it: the layers' part in the compute stretches, the optimizer
// after the last collective.
StepSchedule schedule_from(const model::StepCost& cost);

}  // namespace fb::step
