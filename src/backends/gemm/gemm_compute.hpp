// The step's compute on a GPU: cuBLAS products of one shape, queued on their
// own stream, as many as a stretch of compute takes at the rate measured when
// the kernel is made. The communication of a step runs on the backend's own
// streams beside it and competes for the SMs and memory as NCCL does beside
// a framework's GEMMs.
#pragma once

#include <cstdint>
#include <memory>

#include "fabricbench/step/compute.hpp"
#include "gemm_probe.hpp"

namespace fb {

class GemmCompute : public step::ComputeKernel {
 public:
  // Median time of one product at construction, the rate the step runs at.
  virtual double product_us() const = 0;
  // Products queued since construction (calibration not counted).
  virtual std::uint64_t products() const = 0;
};

// On `device` (current, see place_on_gpu): times `spec.iters` products after
// `spec.warmup` to calibrate. UsageError when the matrices do not fit
// (without CUDA: why there is no GPU), RunError when CUDA or cuBLAS fails.
std::unique_ptr<GemmCompute> make_gemm_compute(const GemmSpec& spec, int device);

}  // namespace fb
