// The step's compute on the host. The interface (ComputeKernel, UnitQuota)
// is core's (fabricbench/core/compute_kernel.hpp).
#pragma once

#include <memory>

#include "fabricbench/core/compute_kernel.hpp"

namespace fb::step {

// The port lives in core, so that a backend implementing it needs no step header.
using fb::ComputeKernel;
using fb::UnitQuota;

// Host: a dependent chain of fused multiply-adds on a few registers,
// calibrated on this rank at construction (each rank its own rate, so a slow
// core shows as a slow rank, not as a wrong duration).
std::unique_ptr<ComputeKernel> make_host_kernel(double slice_us = 20.0);

}  // namespace fb::step
