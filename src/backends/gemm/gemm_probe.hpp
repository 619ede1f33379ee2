// The compute side: dense matrix products on the current GPU, on random data
// (never zeros: they run faster than real data), timed with events after a
// warm-up. Gives achieved TFLOP/s per GPU, what the model needs and a quick
// way to spot a slow or throttled GPU among many.
#pragma once

#include "blas.hpp"
#include "fabricbench/backends/gpu.hpp"

namespace fb {

// Runs on `device` (current, see gpu::place_on_gpu). Throws RunError when a
// device or library call fails, naming it, and UsageError when the matrices do not fit.
GemmResult run_gemm(gpu::Devices& devices, gpu::BlasLibrary& blas, const GemmSpec& spec, int device);

}  // namespace fb
