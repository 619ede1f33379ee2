#include <cublas_v2.h>
#include <fmt/format.h>

#include <vector>

#include "cuda_common/gpu_error.hpp"
#include "cuda_common/gpu_memory.hpp"
#include "cuda_common/stream_timer.hpp"
#include "fabricbench/core/errors.hpp"
#include "gemm_fill.hpp"
#include "gemm_probe.hpp"

namespace fb {
namespace {

cudaDataType_t cuda_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::bfloat16:
      return CUDA_R_16BF;
    case Dtype::half:
      return CUDA_R_16F;
    default:
      return CUDA_R_32F;
  }
}

void check_cublas(cublasStatus_t rc, const char* call, int device) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw RunError(gpu::error_text(call, fmt::format("{}: {}", cublasGetStatusName(rc), cublasGetStatusString(rc)),
                                   device));
}

struct Handle {
  cublasHandle_t h = nullptr;
  cudaStream_t stream = nullptr;
  ~Handle() {
    if (h) cublasDestroy(h);
    if (stream) cudaStreamDestroy(stream);
  }
};

}  // namespace

GemmResult run_gemm(const GemmSpec& spec, int device) {
  const std::size_t word = dtype_bytes(spec.dtype);
  const auto m = static_cast<std::uint64_t>(spec.m), n = static_cast<std::uint64_t>(spec.n),
             k = static_cast<std::uint64_t>(spec.k);
  gpu::Buffer a(gpu::MemoryKind::device, device), b(gpu::MemoryKind::device, device),
      c(gpu::MemoryKind::device, device);
  for (auto [buf, elems] : {std::pair{&a, m * k}, std::pair{&b, k * n}, std::pair{&c, m * n}}) {
    const std::string error = buf->grow(elems * word);
    if (!error.empty()) throw UsageError(fmt::format("GEMM {}x{}x{}: {}; use a smaller --size", m, n, k, error));
  }
  gpu::random_fill(spec.dtype, a.data(), m * k, 1, device);
  gpu::random_fill(spec.dtype, b.data(), k * n, 2, device);
  gpu::random_fill(spec.dtype, c.data(), m * n, 3, device);

  Handle handle;
  gpu::check(cudaStreamCreateWithFlags(&handle.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", device);
  check_cublas(cublasCreate(&handle.h), "cublasCreate", device);
  check_cublas(cublasSetStream(handle.h, handle.stream), "cublasSetStream", device);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cudaDataType_t type = cuda_type(spec.dtype);
  // fp32 accumulation for every input type, as frameworks do; no TF32 for fp32.
  auto product = [&] {
    check_cublas(cublasGemmEx(handle.h, CUBLAS_OP_N, CUBLAS_OP_N, spec.m, spec.n, spec.k, &alpha, a.data(), type,
                              spec.m, b.data(), type, spec.k, &beta, c.data(), type, spec.m, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx", device);
  };
  gpu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device);
  for (int i = 0; i < spec.warmup; ++i) product();

  std::vector<double> start(static_cast<std::size_t>(spec.iters));
  std::vector<double> duration(start.size());
  gpu::StreamTimer timer(handle.stream, device);
  timer.time_queued({start, duration}, product);

  GemmResult r;
  r.spec = spec;
  r.time = summarize(duration);
  const double flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  r.tflops = r.time.median_us > 0 ? flop / (r.time.median_us * 1e-6) / 1e12 : 0;
  return r;
}

}  // namespace fb
