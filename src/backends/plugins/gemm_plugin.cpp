// The gemm plugin: the GPU tools (placement, cuBLAS products) for
// `fabricbench gemm` and the step's GPU compute.
#include <string>

#include "cuda_common/cuda_devices.hpp"
#include "fabricbench/backends/plugin.hpp"
#include "gemm/gemm_compute.hpp"
#include "gemm/gemm_probe.hpp"
#include "gpu_backends.hpp"
#include "plugins/plugin_identity.hpp"

namespace fb {
namespace {

class CublasTools final : public GpuTools {
 public:
  std::string absent_reason() const override { return gpu::absent_reason(); }
  Support place(const Comm& world, int device_option, GpuPlacement& out) const override {
    return gpu::place_on_gpu(world, device_option, out, gpu::cuda_devices());
  }
  int current_device() const override { return gpu::current_gpu(); }
  GemmResult run_gemm(const GemmSpec& spec, int device) const override { return fb::run_gemm(spec, device); }
  std::unique_ptr<GemmCompute> make_gemm_compute(const GemmSpec& spec, int device) const override {
    return fb::make_gemm_compute(spec, device);
  }
};

const GpuTools* tools() {
  static const CublasTools t;
  return &t;
}

}  // namespace
}  // namespace fb

FB_DEFINE_PLUGIN_ABI()

const fb::PluginApi* fabricbench_plugin() {
  static const std::string built = fb::plugin::built_with(false);
  static const fb::PluginApi api{"gemm", "cuBLAS matrix products and GPU placement (gemm, step on GPUs)",
                                 built.c_str(), [] { return fb::gpu::absent_reason(); }, nullptr, fb::tools,
                                 fb::gpu::cuda_versions};
  return &api;
}
