// One matrix product, ready to queue: the three matrices on the device
// (random, never zero), a library handle and the stream it runs on, all
// through the device layer (devices.hpp) and the matrix-product library
// (blas.hpp). The GEMM probe times it; the step's GPU compute kernel queues
// it as work. Plain C++: the same code runs on cuBLAS and on the host double.
#pragma once

#include <memory>

#include "blas.hpp"
#include "cuda_common/gpu_memory.hpp"
#include "fabricbench/backends/gpu.hpp"

namespace fb::gpu {

class GemmRunner {
 public:
  // Allocates on `device` (current): UsageError for a datatype not offered
  // and naming the shape when the matrices do not fit; RunError when a
  // device or library call fails.
  GemmRunner(Devices& devices, BlasLibrary& blas, const GemmSpec& spec, int device);
  // Queue one product on stream(); does not wait.
  void product();
  DeviceStream& stream() const { return *stream_; }
  int device() const { return device_; }
  const GemmSpec& spec() const { return spec_; }
  double flop() const;  // per product: 2 m n k
  // The matrices (device memory), column-major: A m x k (for fp8, k x m
  // and read transposed), B k x n, C = op(A) B m x n (for fp8, bfloat16).
  const void* a() const { return a_.data(); }
  const void* b() const { return b_.data(); }
  const void* c() const { return c_.data(); }

 private:
  GemmSpec spec_;
  int device_;
  Buffer a_, b_, c_;
  std::unique_ptr<DeviceStream> stream_;
  std::unique_ptr<Blas> blas_;  // after stream_: destroyed before the stream it queues on
};

// `gemm.spec().iters` products timed with events after `warmup` untimed ones
// and, with `sustain_ms`, after that long of untimed products: the rate the
// GPU keeps up (its clock under the power limit), not its first burst.
GemmResult time_gemm(GemmRunner& gemm, double sustain_ms = 0);

}  // namespace fb::gpu
