// The host double of the matrix-product library (gemm/blas.hpp), for tests
// only: products computed exactly on the device double's host memory
// (sim_devices.hpp), in float sums over the bf16, fp16, fp32 or fp8 e4m3
// inputs (A read transposed where the product says so), each
// queued on its stream at the device time of its flop at the fixture's peak
// (SimDevices::product_us), so the GEMM code's timings are deterministic.
// It refuses what cuBLAS refuses: a leading dimension shorter than its
// matrix's rows, memory that is not the stream's GPU's, a datatype or a sum
// type it has no product for, and an fp8 product cuBLASLt has no kernel for
// (before compute capability 8.9, A not transposed, rows not 16 bytes apart). The fill writes gemm_values.hpp's values,
// as the device's kernel does.
#pragma once

#include <vector>

#include "gemm/blas.hpp"
#include "sim_devices.hpp"

namespace fb::test {

class SimBlas final : public gpu::BlasLibrary {
 public:
  explicit SimBlas(SimDevices& devices) : devices_(devices) {}

  std::unique_ptr<gpu::Blas> open(gpu::DeviceStream& stream, int device) override;
  void random_fill(int device, Dtype dtype, void* data, std::uint64_t n, std::uint64_t seed) override;

  // What the tests read: every product queued, and the C of the last one
  // that ran (column-major, ldc apart, as floats), kept after its memory is freed.
  std::vector<gpu::MatrixProduct> queued;
  std::vector<float> last_c;
  int products_run = 0;

 private:
  SimDevices& devices_;
};

}  // namespace fb::test
