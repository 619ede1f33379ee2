#include "gemm_runner.hpp"

#include <fmt/format.h>

#include "fabricbench/core/errors.hpp"

namespace fb::gpu {
namespace {

// What `fabricbench gemm -d` and the step's --gemm-dtype offer.
bool offered(Dtype dtype) { return dtype == Dtype::bfloat16 || dtype == Dtype::half || dtype == Dtype::float32; }

}  // namespace

GemmRunner::GemmRunner(Devices& devices, BlasLibrary& blas, const GemmSpec& spec, int device)
    : spec_(spec),
      device_(device),
      a_(devices, MemoryKind::device, device),
      b_(devices, MemoryKind::device, device),
      c_(devices, MemoryKind::device, device) {
  if (!offered(spec.dtype))
    throw UsageError(fmt::format("GEMM: no {} product here; use bf16, fp16 or fp32", name(spec.dtype)));
  const std::size_t word = dtype_bytes(spec.dtype);
  const auto m = static_cast<std::uint64_t>(spec.m), n = static_cast<std::uint64_t>(spec.n),
             k = static_cast<std::uint64_t>(spec.k);
  for (auto [buf, elems] : {std::pair{&a_, m * k}, std::pair{&b_, k * n}, std::pair{&c_, m * n}}) {
    const std::string error = buf->grow(elems * word);
    if (!error.empty()) throw UsageError(fmt::format("GEMM {}x{}x{}: {}; use a smaller size", m, n, k, error));
  }
  // Complete when they return: the products on stream_ read them.
  blas.random_fill(device, spec.dtype, a_.data(), m * k, 1);
  blas.random_fill(device, spec.dtype, b_.data(), k * n, 2);
  blas.random_fill(device, spec.dtype, c_.data(), m * n, 3);
  stream_ = devices.make_stream(device);
  blas_ = blas.open(*stream_, device);
}

void GemmRunner::product() {
  // fp32 accumulation for every input type, as frameworks do; no TF32 for fp32.
  blas_->product({.m = spec_.m,
                  .n = spec_.n,
                  .k = spec_.k,
                  .dtype = spec_.dtype,
                  .accumulate = Dtype::float32,
                  .a = a_.data(),
                  .lda = spec_.m,
                  .b = b_.data(),
                  .ldb = spec_.k,
                  .c = c_.data(),
                  .ldc = spec_.m});
}

double GemmRunner::flop() const {
  return 2.0 * static_cast<double>(spec_.m) * static_cast<double>(spec_.n) * static_cast<double>(spec_.k);
}

}  // namespace fb::gpu
