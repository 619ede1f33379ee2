// The step's compute on a GPU (GemmCompute, fabricbench/backends/gpu.hpp):
// matrix products of one shape (blas.hpp), queued on their own stream. The communication
// of a step runs on the backend's own streams beside it and competes for the
// SMs and memory as NCCL does beside a framework's GEMMs.
#pragma once

#include <memory>

#include "gemm_probe.hpp"

namespace fb {

// On `device` (current, see gpu::place_on_gpu): times `spec.gemm.iters`
// products after `spec.gemm.warmup`, and copies of `spec.copy_bytes`, to calibrate. UsageError when the matrices do not
// fit, RunError when a device or library call fails.
std::unique_ptr<GemmCompute> make_gemm_compute(gpu::Devices& devices, gpu::BlasLibrary& blas,
                                               const StepComputeSpec& spec, int device);

}  // namespace fb
