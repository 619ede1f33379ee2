// The compute side of a synthetic step. A fixed amount of work (not a wall-
// clock wait), so that communication competing for the same resources
// stretches it the way it would stretch a real kernel.
#pragma once

#include <functional>
#include <memory>

namespace fb::step {

class ComputeKernel {
 public:
  virtual ~ComputeKernel() = default;
  // Work that takes `us` microseconds at the calibrated rate. `poll` is called
  // between slices of the work (host: drives communication progress).
  virtual void compute(double us, const std::function<void()>& poll) = 0;
  // Wait until every compute issued so far is complete (device kernels).
  virtual void sync() {}
  virtual std::string describe() const = 0;
};

// Host: a dependent chain of fused multiply-adds on a few registers,
// calibrated on this rank at construction (each rank its own rate, so a slow
// core shows as a slow rank, not as a wrong duration).
std::unique_ptr<ComputeKernel> make_host_kernel(double slice_us = 20.0);

}  // namespace fb::step
