#include "sim_blas.hpp"

#include <fmt/format.h>

#include "fabricbench/core/errors.hpp"
#include "gemm/gemm_values.hpp"
#include "host_narrow.hpp"

namespace fb::test {
namespace {

// Element `i` of a matrix of `dtype` as a float, and a float stored into one.
float load(Dtype dtype, const void* p, std::size_t i) {
  switch (dtype) {
    case Dtype::bfloat16:
      return static_cast<float>(static_cast<const HostBf16*>(p)[i]);
    case Dtype::half:
      return static_cast<float>(static_cast<const HostHalf*>(p)[i]);
    case Dtype::fp8_e4m3:
      return static_cast<float>(static_cast<const HostE4m3*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

void store(Dtype dtype, void* p, std::size_t i, float v) {
  switch (dtype) {
    case Dtype::bfloat16:
      static_cast<HostBf16*>(p)[i] = HostBf16(v);
      break;
    case Dtype::half:
      static_cast<HostHalf*>(p)[i] = HostHalf(v);
      break;
    case Dtype::fp8_e4m3:
      static_cast<HostE4m3*>(p)[i] = HostE4m3(v);
      break;
    default:
      static_cast<float*>(p)[i] = v;
  }
}

bool has_matrix_type(Dtype dtype) {
  return dtype == Dtype::bfloat16 || dtype == Dtype::half || dtype == Dtype::float32 || dtype == Dtype::fp8_e4m3;
}

// What cuBLAS refuses of a product's types and layout: cublasGemmEx has no
// fp8 kernel and writes C in the inputs' type; cuBLASLt's fp8 kernels need
// compute capability 8.9, A transposed ("TN"), C in a 16- or 32-bit float,
// and rows 16 bytes apart. Empty when it runs.
std::string refused(const gpu::MatrixProduct& p, const gpu::DeviceProps& gpu) {
  if (!has_matrix_type(p.dtype) || p.accumulate != Dtype::float32)
    return fmt::format("cublasGemmEx: no {} product summed in {} (simulated)", name(p.dtype), name(p.accumulate));
  if (p.m < 1 || p.n < 1 || p.k < 1 || p.lda < (p.a_transposed ? p.k : p.m) || p.ldb < p.k || p.ldc < p.m)
    return fmt::format("cublasGemmEx: CUBLAS_STATUS_INVALID_VALUE: {}x{}x{} with lda {}, ldb {}, ldc {} (simulated)",
                       p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
  if (p.dtype != Dtype::fp8_e4m3)
    return p.c_dtype == p.dtype
               ? ""
               : fmt::format("cublasGemmEx: C of {} from {} inputs (simulated)", name(p.c_dtype), name(p.dtype));
  const bool c_ok = p.c_dtype == Dtype::bfloat16 || p.c_dtype == Dtype::half || p.c_dtype == Dtype::float32;
  const std::size_t c_word = dtype_bytes(p.c_dtype);
  if (gpu.cc_major * 10 + gpu.cc_minor < 89 || !p.a_transposed || !c_ok || p.lda % 16 != 0 || p.ldb % 16 != 0 ||
      (static_cast<std::size_t>(p.ldc) * c_word) % 16 != 0)
    return fmt::format(
        "cublasLtMatmulAlgoGetHeuristic: no {} kernel for {}x{}x{} (A {}, C {}, lda {}, ldb {}, ldc "
        "{}) on compute capability {}.{} (simulated)",
        name(p.dtype), p.m, p.n, p.k, p.a_transposed ? "transposed" : "not transposed", name(p.c_dtype), p.lda, p.ldb,
        p.ldc, gpu.cc_major, gpu.cc_minor);
  return "";
}

// The elements a column-major `rows` x `cols` matrix spans with leading dimension `ld`.
std::size_t span_elems(int rows, int cols, int ld) {
  return static_cast<std::size_t>(ld) * static_cast<std::size_t>(cols - 1) + static_cast<std::size_t>(rows);
}

class SimHandle final : public gpu::Blas {
 public:
  SimHandle(SimBlas& lib, SimDevices& devices, gpu::DeviceStream& stream, int device)
      : lib_(lib), d_(devices), stream_(stream), device_(device), gpu_(devices.physical(device)) {}

  void product(const gpu::MatrixProduct& p) override {
    if (const std::string why = refused(p, d_.props(device_)); !why.empty()) throw RunError(why);
    const int a_rows = p.a_transposed ? p.k : p.m, a_cols = p.a_transposed ? p.m : p.k;
    d_.require_device("cublasGemmEx A", p.a, span_elems(a_rows, a_cols, p.lda) * dtype_bytes(p.dtype), gpu_);
    d_.require_device("cublasGemmEx B", p.b, span_elems(p.k, p.n, p.ldb) * dtype_bytes(p.dtype), gpu_);
    d_.require_device("cublasGemmEx C", p.c, span_elems(p.m, p.n, p.ldc) * dtype_bytes(p.c_dtype), gpu_);
    lib_.queued.push_back(p);
    const double flop = 2.0 * p.m * p.n * p.k;
    sim_enqueue(stream_, sim_product_us(stream_, flop, p.dtype), [this, p](double&) { run(p); });
  }

 private:
  void run(const gpu::MatrixProduct& p) {
    const auto at = [](int row, int col, int ld) {
      return static_cast<std::size_t>(row) + static_cast<std::size_t>(col) * static_cast<std::size_t>(ld);
    };
    // op(A)'s element (i, l): A's (i, l), or A's (l, i) when A is stored transposed.
    const auto a_at = [&](int i, int l) { return p.a_transposed ? at(l, i, p.lda) : at(i, l, p.lda); };
    for (int j = 0; j < p.n; ++j)
      for (int i = 0; i < p.m; ++i) {
        float sum = 0;
        for (int l = 0; l < p.k; ++l) sum += load(p.dtype, p.a, a_at(i, l)) * load(p.dtype, p.b, at(l, j, p.ldb));
        store(p.c_dtype, p.c, at(i, j, p.ldc), sum);
      }
    lib_.last_c.resize(span_elems(p.m, p.n, p.ldc));
    for (std::size_t i = 0; i < lib_.last_c.size(); ++i) lib_.last_c[i] = load(p.c_dtype, p.c, i);
    ++lib_.products_run;
  }

  SimBlas& lib_;
  SimDevices& d_;
  gpu::DeviceStream& stream_;
  int device_;
  int gpu_;
};

}  // namespace

std::unique_ptr<gpu::Blas> SimBlas::open(gpu::DeviceStream& stream, int device) {
  if (&sim_devices_of(stream) != &devices_)
    throw RunError("cublasSetStream: the stream is another device double's (simulated)");
  return std::make_unique<SimHandle>(*this, devices_, stream, device);
}

void SimBlas::random_fill(int device, Dtype dtype, void* data, std::uint64_t n, std::uint64_t seed) {
  if (!has_matrix_type(dtype))
    throw RunError(fmt::format("the GEMM input fill kernel: no kernel for {} (simulated)", name(dtype)));
  devices_.require_device("the GEMM input fill kernel", data, n * dtype_bytes(dtype), devices_.physical(device));
  for (std::uint64_t i = 0; i < n; ++i) store(dtype, data, i, gemm::input_value(i, seed));
}

}  // namespace fb::test
