#include "gemm_runner.hpp"

#include <fmt/format.h>

#include "cublas_loaded.hpp"
#include "cuda_common/cuda_devices.hpp"
#include "cuda_common/gpu_error.hpp"
#include "fabricbench/core/errors.hpp"
#include "gemm_fill.hpp"

namespace fb::gpu {
namespace {

cudaDataType_t cuda_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::bfloat16:
      return CUDA_R_16BF;
    case Dtype::half:
      return CUDA_R_16F;
    case Dtype::float32:
      return CUDA_R_32F;
    case Dtype::int8:  // `fabricbench gemm -d` takes the three above only
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
  throw UsageError(fmt::format("GEMM: no {} product here; use bf16, fp16 or fp32", name(dtype)));
}

void check_cublas(cublasStatus_t rc, const char* call, int device) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw RunError(
        error_text(call, fmt::format("{}: {}", cublas().status_name(rc), cublas().status_string(rc)), device));
}

}  // namespace

GemmRunner::GemmRunner(const GemmSpec& spec, int device)
    : spec_(spec),
      device_(device),
      a_(cuda_devices(), MemoryKind::device, device),
      b_(cuda_devices(), MemoryKind::device, device),
      c_(cuda_devices(), MemoryKind::device, device) {
  const std::size_t word = dtype_bytes(spec.dtype);
  const auto m = static_cast<std::uint64_t>(spec.m), n = static_cast<std::uint64_t>(spec.n),
             k = static_cast<std::uint64_t>(spec.k);
  for (auto [buf, elems] : {std::pair{&a_, m * k}, std::pair{&b_, k * n}, std::pair{&c_, m * n}}) {
    const std::string error = buf->grow(elems * word);
    if (!error.empty()) throw UsageError(fmt::format("GEMM {}x{}x{}: {}; use a smaller size", m, n, k, error));
  }
  random_fill(spec.dtype, a_.data(), m * k, 1, device);
  random_fill(spec.dtype, b_.data(), k * n, 2, device);
  random_fill(spec.dtype, c_.data(), m * n, 3, device);
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", device);
  stream_.reset(stream);
  cublasHandle_t handle = nullptr;
  check_cublas(cublas().create(&handle), "cublasCreate", device);
  handle_.reset(handle);
  check_cublas(cublas().set_stream(handle, stream), "cublasSetStream", device);
  // The fills ran on the default stream; the products run on stream_.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device);
}

void GemmRunner::product() {
  static const float alpha = 1.0f;
  static const float beta = 0.0f;
  const cudaDataType_t type = cuda_type(spec_.dtype);
  // fp32 accumulation for every input type, as frameworks do; no TF32 for fp32.
  check_cublas(cublas().gemm_ex(handle_.get(), CUBLAS_OP_N, CUBLAS_OP_N, spec_.m, spec_.n, spec_.k, &alpha, a_.data(), type,
                            spec_.m, b_.data(), type, spec_.k, &beta, c_.data(), type, spec_.m, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx", device_);
}

double GemmRunner::flop() const {
  return 2.0 * static_cast<double>(spec_.m) * static_cast<double>(spec_.n) * static_cast<double>(spec_.k);
}

}  // namespace fb::gpu
