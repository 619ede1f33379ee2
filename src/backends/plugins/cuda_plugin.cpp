// The cuda plugin: the copy paths inside a GPU node (`--backend cuda`).
#include <string>

#include "cuda_common/cuda_devices.hpp"
#include "cuda_copy/cuda_copy_backend.hpp"
#include "fabricbench/backends/plugin.hpp"
#include "gpu_backends.hpp"
#include "plugins/plugin_identity.hpp"

FB_DEFINE_PLUGIN_ABI()

const fb::PluginApi* fabricbench_plugin() {
  static const std::string built = fb::plugin::built_with(false);
  static const fb::PluginApi api{"cuda",
                                 "copy paths inside a node: device-local (copy engine, SM kernel), host<->device "
                                 "pinned and pageable, peer GPUs; kernel-launch latency",
                                 built.c_str(),
                                 [] { return fb::gpu::absent_reason(); },
                                 [] { return fb::make_cuda_copy_backend(fb::gpu::cuda_devices()); },
                                 nullptr,
                                 fb::gpu::cuda_versions};
  return &api;
}
