#include "gemm_probe.hpp"

#include <chrono>
#include <vector>

#include "cuda_common/stream_timer.hpp"
#include "gemm_runner.hpp"

namespace fb {

namespace gpu {

GemmResult time_gemm(GemmRunner& gemm, double sustain_ms) {
  const GemmSpec& spec = gemm.spec();
  for (int i = 0; i < spec.warmup; ++i) gemm.product();
  // Products back to back until the GPU has computed for `sustain_ms`: a GPU
  // held at its power limit lowers its clock within that time (the H200 here
  // ran 4096^3 products 17% slower after 40 ms than in the first 4 ms).
  const auto began = std::chrono::steady_clock::now();
  while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count() < sustain_ms) {
    for (int i = 0; i < 8; ++i) gemm.product();
    gemm.stream().synchronize();
  }
  std::vector<double> start(static_cast<std::size_t>(spec.iters));
  std::vector<double> duration(start.size());
  StreamTimer timer(gemm.stream().timing_queue());
  timer.time_queued({start, duration}, [&] { gemm.product(); });
  GemmResult r;
  r.spec = spec;
  r.time = summarize(duration);
  r.tflops = r.time.median_us > 0 ? gemm.flop() / (r.time.median_us * 1e-6) / 1e12 : 0;
  return r;
}

}  // namespace gpu

GemmResult run_gemm(gpu::Devices& devices, gpu::BlasLibrary& blas, const GemmSpec& spec, int device) {
  gpu::GemmRunner gemm(devices, blas, spec, device);
  return gpu::time_gemm(gemm);
}

}  // namespace fb
