// One cuBLAS matrix product, ready to queue: the three matrices on the
// device (random, never zero), a cuBLAS handle and the stream it runs on.
// The GEMM probe times it; the step's GPU compute kernel queues it as work.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <type_traits>

#include "cublas_loaded.hpp"
#include "cuda_common/gpu_memory.hpp"
#include "gemm_probe.hpp"

namespace fb::gpu {

class GemmRunner {
 public:
  // Allocates on `device` (current): UsageError naming the shape when the
  // matrices do not fit; RunError when a CUDA or cuBLAS call fails.
  GemmRunner(const GemmSpec& spec, int device);
  // Queue one product on stream(); does not wait.
  void product();
  cudaStream_t stream() const { return stream_.get(); }
  int device() const { return device_; }
  const GemmSpec& spec() const { return spec_; }
  double flop() const;  // per product: 2 m n k

 private:
  GemmSpec spec_;
  int device_;
  Buffer a_, b_, c_;
  // Owned, so that a constructor that throws half-way frees what it made.
  struct StreamFree {
    void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
  };
  struct HandleFree {
    void operator()(cublasHandle_t h) const { cublas().destroy(h); }
  };
  std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamFree> stream_;
  std::unique_ptr<std::remove_pointer_t<cublasHandle_t>, HandleFree> handle_;
};

// `gemm.spec().iters` products timed with events after `warmup` untimed ones
// and, with `sustain_ms`, after that long of untimed products: the rate the
// GPU keeps up (its clock under the power limit), not its first burst.
GemmResult time_gemm(GemmRunner& gemm, double sustain_ms = 0);

}  // namespace fb::gpu
