#include "gemm_runner.hpp"

#include <fmt/format.h>

#include "fabricbench/core/errors.hpp"

namespace fb::gpu {
namespace {

// fp8 products as training frameworks run them (Transformer Engine's fp8
// linear layers): e4m3 inputs through cuBLASLt, A stored transposed (the "TN"
// layout cuBLASLt's fp8 kernels require), C in bfloat16, fp32 sums.
bool fp8(Dtype dtype) { return dtype == Dtype::fp8_e4m3; }
Dtype c_type(Dtype dtype) { return fp8(dtype) ? Dtype::bfloat16 : dtype; }

// cuBLASLt's fp8 kernels run on compute capability 8.9 and newer, and read
// A and B along k and write C along m in rows that start 16 bytes apart.
void require_fp8(const GemmSpec& s, const DeviceProps& gpu) {
  if (gpu.cc_major * 10 + gpu.cc_minor < 89)
    throw UsageError(
        fmt::format("GEMM in {} on {} (compute capability {}.{}): fp8 products need 8.9 or newer (Ada, "
                    "Hopper, Blackwell); use bf16 or fp16",
                    name(s.dtype), gpu.name, gpu.cc_major, gpu.cc_minor));
  if (s.m % 16 != 0 || s.k % 16 != 0)
    throw UsageError(
        fmt::format("GEMM {}x{}x{} in {}: cuBLASLt's fp8 kernels need m and k multiples of 16; use "
                    "such a size, or bf16",
                    s.m, s.n, s.k, name(s.dtype)));
}

}  // namespace

GemmRunner::GemmRunner(Devices& devices, BlasLibrary& blas, const GemmSpec& spec, int device)
    : spec_(spec),
      device_(device),
      a_(devices, MemoryKind::device, device),
      b_(devices, MemoryKind::device, device),
      c_(devices, MemoryKind::device, device) {
  if (!gemm_offers(spec.dtype))
    throw UsageError(fmt::format("GEMM: no {} product here; use {}", name(spec.dtype), kGemmDtypes));
  // The device's properties only where fp8 needs them: every other GEMM (the
  // step times twelve at start-up) skips cudaGetDeviceProperties.
  if (fp8(spec.dtype)) require_fp8(spec, devices.props(device));
  const std::size_t word = dtype_bytes(spec.dtype), c_word = dtype_bytes(c_type(spec.dtype));
  const auto m = static_cast<std::uint64_t>(spec.m), n = static_cast<std::uint64_t>(spec.n),
             k = static_cast<std::uint64_t>(spec.k);
  for (auto [buf, bytes] :
       {std::pair{&a_, m * k * word}, std::pair{&b_, k * n * word}, std::pair{&c_, m * n * c_word}}) {
    const std::string error = buf->grow(bytes);
    if (!error.empty()) throw UsageError(fmt::format("GEMM {}x{}x{}: {}; use a smaller size", m, n, k, error));
  }
  // Complete when they return: the products on stream_ read them.
  blas.random_fill(device, spec.dtype, a_.data(), m * k, 1);
  blas.random_fill(device, spec.dtype, b_.data(), k * n, 2);
  blas.random_fill(device, c_type(spec.dtype), c_.data(), m * n, 3);
  stream_ = devices.make_stream(device);
  blas_ = blas.open(*stream_, device);
}

void GemmRunner::product() {
  // fp32 accumulation for every input type, as frameworks do; no TF32 for fp32.
  const bool a_transposed = fp8(spec_.dtype);
  blas_->product({.m = spec_.m,
                  .n = spec_.n,
                  .k = spec_.k,
                  .dtype = spec_.dtype,
                  .c_dtype = c_type(spec_.dtype),
                  .accumulate = Dtype::float32,
                  .a_transposed = a_transposed,
                  .a = a_.data(),
                  .lda = a_transposed ? spec_.k : spec_.m,
                  .b = b_.data(),
                  .ldb = spec_.k,
                  .c = c_.data(),
                  .ldc = spec_.m});
}

double GemmRunner::flop() const {
  return 2.0 * static_cast<double>(spec_.m) * static_cast<double>(spec_.n) * static_cast<double>(spec_.k);
}

}  // namespace fb::gpu
