// The compute side: dense matrix products through cuBLAS on the current GPU,
// on random data (never zeros: they run faster than real data), timed with
// events after a warm-up. Gives achieved TFLOP/s per GPU, what the model
// needs and a quick way to spot a slow or throttled GPU among many.
#pragma once

#include <string>

#include "fabricbench/core/stats.hpp"
#include "fabricbench/core/types.hpp"

namespace fb {

struct GemmSpec {
  Dtype dtype = Dtype::bfloat16;  // bfloat16, half or float32 (no TF32)
  int m = 8192;
  int n = 8192;
  int k = 8192;
  int iters = 20;
  int warmup = 5;
};

struct GemmResult {
  GemmSpec spec;
  TimeStats time;       // per product
  double tflops = 0;    // 2mnk / median time, 1e12 flop/s
};

// Runs on the current device (see place_on_gpu). Throws RunError when a CUDA
// or cuBLAS call fails, naming it, and UsageError when the matrices do not fit.
GemmResult run_gemm(const GemmSpec& spec, int device);

}  // namespace fb
