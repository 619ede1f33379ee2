#include "gemm_compute.hpp"

#include <fmt/format.h>

#include "copy_work.hpp"
#include "gemm_runner.hpp"

namespace fb {
namespace {

// The step computes for as long as a training step does: its products run at
// the GPU's sustained rate, so that is the rate they are planned at.
constexpr double kSustainMs = 300;

class ProductCompute final : public GemmCompute {
 public:
  ProductCompute(gpu::Devices& devices, gpu::BlasLibrary& blas, const StepComputeSpec& spec, int device)
      : gemm_(devices, blas, spec.gemm, device),
        calibration_(gpu::time_gemm(gemm_, kSustainMs)),
        quota_(calibration_.time.median_us),
        copy_(devices, gemm_.stream(), device, spec.copy_bytes),
        copy_quota_(copy_.copy_us()) {}

  // Queues the products, then waits for them, driving `poll` throughout: a
  // call issued after this stretch must start only once it is computed (as
  // a framework's communication stream waits on the backward's event), and
  // calls queued before it keep being started as their turn comes, also
  // while the launches themselves block on a full launch queue. The host
  // gap this wait leaves on the compute stream at each issue point is one
  // launch (microseconds, against products of hundreds).
  void compute(double us, const std::function<void()>& poll) override { work(us, 0, poll); }

  // The products, then the copies, on the one stream: a layer's norms and
  // activations run between its products, on the stream its GEMMs use.
  void work(double products_us, double memory_us, const std::function<void()>& poll) override {
    const std::uint64_t n = quota_.take(products_us);
    for (std::uint64_t i = 0; i < n; ++i) {
      gemm_.product();
      poll();
    }
    const std::uint64_t c = copy_quota_.take(memory_us);
    for (std::uint64_t i = 0; i < c; ++i) {
      copy_.copy();
      poll();
    }
    products_ += n;
    copies_ += c;
    gemm_.stream().mark();
    while (!gemm_.stream().mark_passed()) poll();
  }

  void sync() override { gemm_.stream().synchronize(); }

  std::string describe() const override {
    const GemmSpec& s = gemm_.spec();
    return fmt::format(
        "cuBLAS {} GEMM {}x{}x{} on GPU {}, {:.1f} us per product ({:.1f} TFLOP/s after {:.0f} ms of "
        "products); non-GEMM work as SM copies of {} MiB, {:.1f} us each ({:.0f} GB/s read and written); "
        "waited on while polling",
        name(s.dtype), s.m, s.n, s.k, gemm_.device(), product_us(), calibration_.tflops, kSustainMs,
        copy_.bytes() >> 20, copy_.copy_us(), copy_.gbps());
  }

  double product_us() const override { return quota_.unit_us(); }
  std::uint64_t products() const override { return products_; }
  double copy_us() const override { return copy_quota_.unit_us(); }
  std::uint64_t copies() const override { return copies_; }

 private:
  gpu::GemmRunner gemm_;
  GemmResult calibration_;
  UnitQuota quota_;
  gpu::CopyWork copy_;  // on gemm_'s stream: declared after it
  UnitQuota copy_quota_;
  std::uint64_t products_ = 0;
  std::uint64_t copies_ = 0;
};

}  // namespace

std::unique_ptr<GemmCompute> make_gemm_compute(gpu::Devices& devices, gpu::BlasLibrary& blas,
                                               const StepComputeSpec& spec, int device) {
  return std::make_unique<ProductCompute>(devices, blas, spec, device);
}

}  // namespace fb
