#include "gemm_probe.hpp"

#include <vector>

#include "cuda_common/stream_timer.hpp"
#include "gemm_runner.hpp"

namespace fb {

namespace gpu {

GemmResult time_gemm(GemmRunner& gemm) {
  const GemmSpec& spec = gemm.spec();
  for (int i = 0; i < spec.warmup; ++i) gemm.product();
  std::vector<double> start(static_cast<std::size_t>(spec.iters));
  std::vector<double> duration(start.size());
  StreamTimer timer(gemm.stream(), gemm.device());
  timer.time_queued({start, duration}, [&] { gemm.product(); });
  GemmResult r;
  r.spec = spec;
  r.time = summarize(duration);
  r.tflops = r.time.median_us > 0 ? gemm.flop() / (r.time.median_us * 1e-6) / 1e12 : 0;
  return r;
}

}  // namespace gpu

GemmResult run_gemm(const GemmSpec& spec, int device) {
  gpu::GemmRunner gemm(spec, device);
  return gpu::time_gemm(gemm);
}

}  // namespace fb
