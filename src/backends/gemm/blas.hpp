// The matrix-product library under the GEMM code, as the project's own
// interface: cuBLAS's calls (and the kernel that fills a product's inputs)
// with no vendor type in sight. CublasLibrary (cublas_library.cpp, in the
// gemm plugin) forwards each to cuBLAS or CUDA and checks its return code,
// deciding nothing; the host double of the tests (tests/support/sim_blas.hpp)
// computes the same products on the device double's host memory, so the
// GEMM code's own logic (the datatypes offered, fp32 accumulation, the shape
// that does not fit, warm-up, sustain, the flop count, the timing) runs in CI.
// A library of its own beside the device layer (devices.hpp), as NCCL's is:
// the other GPU plugins carry neither cuBLAS's loader nor the fill kernel.
#pragma once

#include <cstdint>
#include <memory>

#include "cuda_common/devices.hpp"
#include "fabricbench/core/types.hpp"

namespace fb::gpu {

// C = op(A) B, each matrix column-major with its leading dimension (BLAS's
// layout): op(A) is m x k, B is k x n, C is m x n; C overwritten (alpha 1,
// beta 0). op(A) is A, or with `a_transposed` the transpose of A stored
// k x m: the layout ("TN") cuBLASLt's fp8 kernels require.
struct MatrixProduct {
  int m = 0;
  int n = 0;
  int k = 0;
  Dtype dtype = Dtype::bfloat16;      // of A and B
  Dtype c_dtype = Dtype::bfloat16;    // of C: A's and B's, or bfloat16 for fp8 inputs
  Dtype accumulate = Dtype::float32;  // the type the sums are kept in
  bool a_transposed = false;
  const void* a = nullptr;
  int lda = 0;
  const void* b = nullptr;
  int ldb = 0;
  void* c = nullptr;
  int ldc = 0;
};

// One library handle, its products queued on the stream it was opened on.
class Blas {
 public:
  virtual ~Blas() = default;
  // Queues one product; does not wait.
  virtual void product(const MatrixProduct& p) = 0;
};

class BlasLibrary {
 public:
  virtual ~BlasLibrary() = default;
  // A handle whose products go on `stream` (of `device`, current), which
  // outlives it. RunError naming the call when the library fails.
  virtual std::unique_ptr<Blas> open(DeviceStream& stream, int device) = 0;
  // `n` elements of `dtype` at `data` (device memory of `device`) set to
  // gemm_values.hpp's random values for `seed`; complete when it returns.
  virtual void random_fill(int device, Dtype dtype, void* data, std::uint64_t n, std::uint64_t seed) = 0;
};

}  // namespace fb::gpu
