// The mpi-cuda plugin: MPI on device buffers, where the MPI library is CUDA-aware.
#include <string>

#include "cuda_common/cuda_devices.hpp"
#include "fabricbench/backends/plugin.hpp"
#include "gpu_backends.hpp"
#include "mpi_cuda/mpi_cuda_backend.hpp"
#include "plugins/plugin_identity.hpp"

FB_DEFINE_PLUGIN_ABI()

const fb::PluginApi* fabricbench_plugin() {
  static const std::string built = fb::plugin::built_with(false);
  static const fb::PluginApi api{"mpi-cuda",
                                 "MPI collectives and point-to-point on device buffers (a CUDA-aware MPI)",
                                 built.c_str(),
                                 [] {
                                   const std::string gpu = fb::gpu::absent_reason();
                                   return gpu.empty() ? fb::mpi_cuda_awareness() : gpu;
                                 },
                                 [] { return fb::make_mpi_cuda_backend(fb::gpu::cuda_devices()); },
                                 nullptr,
                                 fb::gpu::cuda_versions};
  return &api;
}
