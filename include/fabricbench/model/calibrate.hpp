// A workload rewritten to run at a measured compute rate (`fabricbench step
// --calibrated-workload`), so `fabricbench model` prices the step at the pace
// this machine reached rather than the one the workload states.
#pragma once

#include <string>

#include "fabricbench/model/fabric.hpp"
#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/workload.hpp"
#include "fabricbench/core/fact.hpp"

namespace fb::model {

// `yaml`, a workload that parse_workload accepts, with the compute rate it
// states (compute: tflops, mfu, or of_gemm, the share of its GEMM curve)
// multiplied by `factor`, under a comment line that says so. A "40%" rate is
// written back as the fraction (0.4 x factor). The rest of the document is
// kept, re-emitted by yaml-cpp (its other comments are lost).
std::string calibrated_workload_yaml(const std::string& yaml, double factor);

// The share of NCCL's bus bandwidth for `group` ("tp", "dp" or "pp";
// workload busbw_share) at which the model's step equals a framework's
// measured step, every other input as the workload states it: how much of
// NCCL's bandwidth that framework's collectives reach. Unknown, with the
// reason, when no share from 0.001 to 1 gives that step (the run is faster
// than the model at NCCL's own bandwidth, or the group's communication
// cannot stretch the step that far).
Fact<double> fit_busbw_share(const Workload& w, const Fabric& fabric, const Presets& presets,
                                   std::string_view group, double measured_step_us);

}  // namespace fb::model
