// A workload rewritten to run at a measured compute rate (`fabricbench step
// --calibrated-workload`), so `fabricbench model` prices the step at the pace
// this machine reached rather than the one the workload states.
#pragma once

#include <string>

namespace fb::model {

// `yaml`, a workload that parse_workload accepts, with the compute rate it
// states (compute: tflops, mfu, or of_gemm, the share of its GEMM curve)
// multiplied by `factor`, under a comment line that says so. A "40%" rate is
// written back as the fraction (0.4 x factor). The rest of the document is
// kept, re-emitted by yaml-cpp (its other comments are lost).
std::string calibrated_workload_yaml(const std::string& yaml, double factor);

}  // namespace fb::model
