// The gemm plugin: the GPU tools (placement, cuBLAS products) for
// `fabricbench gemm` and the step's GPU compute, over CUDA and cuBLAS.
#include <string>

#include "cuda_common/cuda_devices.hpp"
#include "fabricbench/backends/plugin.hpp"
#include "gemm/cublas_library.hpp"
#include "gemm/device_tools.hpp"
#include "gpu_backends.hpp"
#include "plugins/plugin_identity.hpp"

namespace fb {
namespace {

const GpuTools* tools() {
  static const gpu::DeviceTools t(gpu::cuda_devices(), gpu::cublas_library());
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
