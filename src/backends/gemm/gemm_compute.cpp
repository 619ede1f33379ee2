#include "gemm_compute.hpp"

#include <fmt/format.h>

#include "gemm_runner.hpp"

namespace fb {
namespace {

// The step computes for as long as a training step does: its products run at
// the GPU's sustained rate, so that is the rate they are planned at.
constexpr double kSustainMs = 300;

class ProductCompute final : public GemmCompute {
 public:
  ProductCompute(gpu::Devices& devices, gpu::BlasLibrary& blas, const GemmSpec& spec, int device)
      : gemm_(devices, blas, spec, device),
        calibration_(gpu::time_gemm(gemm_, kSustainMs)),
        quota_(calibration_.time.median_us) {}

  // Queues the products, then waits for them, driving `poll` throughout: a
  // call issued after this stretch must start only once it is computed (as
  // a framework's communication stream waits on the backward's event), and
  // calls queued before it keep being started as their turn comes, also
  // while the launches themselves block on a full launch queue. The host
  // gap this wait leaves on the compute stream at each issue point is one
  // launch (microseconds, against products of hundreds).
  void compute(double us, const std::function<void()>& poll) override {
    const std::uint64_t n = quota_.take(us);
    for (std::uint64_t i = 0; i < n; ++i) {
      gemm_.product();
      poll();
    }
    products_ += n;
    gemm_.stream().mark();
    while (!gemm_.stream().mark_passed()) poll();
  }

  void sync() override { gemm_.stream().synchronize(); }

  std::string describe() const override {
    const GemmSpec& s = gemm_.spec();
    return fmt::format(
        "cuBLAS {} GEMM {}x{}x{} on GPU {}, {:.1f} us per product ({:.1f} TFLOP/s after {:.0f} ms of "
        "products), waited on while polling",
        name(s.dtype), s.m, s.n, s.k, gemm_.device(), product_us(), calibration_.tflops, kSustainMs);
  }

  double product_us() const override { return quota_.unit_us(); }
  std::uint64_t products() const override { return products_; }

 private:
  gpu::GemmRunner gemm_;
  GemmResult calibration_;
  UnitQuota quota_;
  std::uint64_t products_ = 0;
};

}  // namespace

std::unique_ptr<GemmCompute> make_gemm_compute(gpu::Devices& devices, gpu::BlasLibrary& blas, const GemmSpec& spec,
                                               int device) {
  return std::make_unique<ProductCompute>(devices, blas, spec, device);
}

}  // namespace fb
