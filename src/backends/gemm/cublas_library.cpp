#include "cublas_library.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cublas_loaded.hpp"
#include "cuda_common/cuda_devices.hpp"
#include "cuda_common/cuda_stream.hpp"
#include "cuda_common/gpu_error.hpp"
#include "fabricbench/core/errors.hpp"
#include "gemm_fill.hpp"

namespace fb::gpu {
namespace {

// Our datatype's name in CUDA's terms; a type with none is a caller's error.
cudaDataType_t cuda_type(Dtype dtype, const char* call, int device) {
  switch (dtype) {
    case Dtype::bfloat16:
      return CUDA_R_16BF;
    case Dtype::half:
      return CUDA_R_16F;
    case Dtype::float32:
      return CUDA_R_32F;
    case Dtype::int8:  // every enumerator named: a new dtype is a compile warning here, not a silent refusal
    case Dtype::uint8:
    case Dtype::int32:
    case Dtype::uint32:
    case Dtype::int64:
    case Dtype::uint64:
    case Dtype::float64:
    case Dtype::fp8_e4m3:
    case Dtype::fp8_e5m2:
      break;
  }
  throw RunError(error_text(call, fmt::format("no CUDA matrix type for {}", name(dtype)), device));
}

// CUBLAS_COMPUTE_32F: sums in fp32 as stored, not the TF32 of _FAST_TF32.
cublasComputeType_t compute_type(Dtype accumulate, int device) {
  if (accumulate == Dtype::float32) return CUBLAS_COMPUTE_32F;
  throw RunError(error_text("cublasGemmEx", fmt::format("no cuBLAS compute type for {}", name(accumulate)), device));
}

void check_cublas(cublasStatus_t rc, const char* call, int device) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw RunError(
        error_text(call, fmt::format("{}: {}", cublas().status_name(rc), cublas().status_string(rc)), device));
}

class Cublas final : public Blas {
 public:
  Cublas(DeviceStream& stream, int device) : device_(device) {
    check_cublas(cublas().create(&handle_), "cublasCreate", device);
    check_cublas(cublas().set_stream(handle_, raw_stream(stream)), "cublasSetStream", device);
  }
  ~Cublas() override {
    if (handle_) cublas().destroy(handle_);  // teardown: nothing left to report to
  }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  void product(const MatrixProduct& p) override {
    const float alpha = 1.0f;  // host scalars in the compute type's precision
    const float beta = 0.0f;
    const cudaDataType_t type = cuda_type(p.dtype, "cublasGemmEx", device_);
    check_cublas(
        cublas().gemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, p.m, p.n, p.k, &alpha, p.a, type, p.lda, p.b, type, p.ldb,
                         &beta, p.c, type, p.ldc, compute_type(p.accumulate, device_), CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx", device_);
  }

 private:
  int device_;
  cublasHandle_t handle_ = nullptr;
};

class CublasLibrary final : public BlasLibrary {
 public:
  std::unique_ptr<Blas> open(DeviceStream& stream, int device) override {
    DeviceGuard on(device);  // cublasCreate binds the handle to the current device
    return std::make_unique<Cublas>(stream, device);
  }
  void random_fill(int device, Dtype dtype, void* data, std::uint64_t n, std::uint64_t seed) override {
    cuda_type(dtype, "the GEMM input fill kernel", device);  // the kernel's types are the matrices'
    DeviceGuard on(device);
    gpu::random_fill(dtype, data, n, seed, device);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device);
  }
};

}  // namespace

BlasLibrary& cublas_library() {
  static CublasLibrary library;
  return library;
}

}  // namespace fb::gpu
