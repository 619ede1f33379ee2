// The compute side of a synthetic step, as a port: a fixed amount of work
// (not a wall-clock wait), so that communication competing for the same
// resources stretches it the way it would stretch a real kernel. The step
// executor drives it; the host kernel (step) and the GPU's cuBLAS products
// (the gemm plugin) implement it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

namespace fb {

class ComputeKernel {
 public:
  virtual ~ComputeKernel() = default;
  // Work that takes `us` microseconds at the calibrated rate. `poll` is called
  // between slices of the work (host: drives communication progress).
  virtual void compute(double us, const std::function<void()>& poll) = 0;
  // Products for `products_us`, then memory-bound work (a step's norms,
  // activations, residual adds and optimizer: model/non_gemm.hpp) for
  // `memory_us`, both at their calibrated rates, returning once both are
  // done. A kernel without a memory-bound kind of its own runs its compute
  // for both (the host's: a core has no HBM to be bound by).
  virtual void work(double products_us, double memory_us, const std::function<void()>& poll) {
    compute(products_us + memory_us, poll);
  }
  // Wait until every compute issued so far is complete (device kernels).
  virtual void sync() {}
  virtual std::string describe() const = 0;
};

// Work that comes in whole units (one GEMM) for stretches of compute of any
// length: each stretch runs the number of units nearest to what it is owed,
// and the difference carries to the next stretch, so a step's total stays
// within half a unit of its target however finely the step is cut.
class UnitQuota {
 public:
  explicit UnitQuota(double unit_us) : unit_us_(unit_us > 0 ? unit_us : 1.0) {}
  std::uint64_t take(double us) {
    owed_us_ += us;
    const double units = std::max(0.0, std::round(owed_us_ / unit_us_));
    owed_us_ -= units * unit_us_;
    return static_cast<std::uint64_t>(units);
  }
  double unit_us() const { return unit_us_; }

 private:
  double unit_us_;
  double owed_us_ = 0;
};

}  // namespace fb
