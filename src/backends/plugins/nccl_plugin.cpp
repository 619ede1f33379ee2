// The nccl plugin: NCCL collectives and point-to-point on device buffers.
#include <fmt/format.h>
#include <nccl.h>

#include <string>

#include "fabricbench/backends/plugin.hpp"
#include "gpu_backends.hpp"
#include "cuda_common/cuda_devices.hpp"
#include "nccl/cuda_nccl.hpp"
#include "nccl/nccl_backend.hpp"
#include "plugins/plugin_identity.hpp"

namespace fb {
namespace {

// The NCCL this process loaded (may differ from the one built against).
std::vector<LibraryVersion> nccl_versions() {
  std::vector<LibraryVersion> out = gpu::cuda_versions();
  int code = 0;
  if (ncclGetVersion(&code) == ncclSuccess && code > 0) {
    // NCCL_VERSION_CODE: 1000 * major + 100 * minor + patch up to 2.8, then
    // 10000 * major + 100 * minor + patch.
    out.push_back({"nccl",
                   code >= 10000 ? fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100)
                                 : fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100),
                   ""});
  } else {
    out.push_back({"nccl", "", "ncclGetVersion failed"});
  }
  return out;
}

}  // namespace
}  // namespace fb

FB_DEFINE_PLUGIN_ABI()

const fb::PluginApi* fabricbench_plugin() {
  static const std::string built = fb::plugin::built_with(true);
  static const fb::PluginApi api{"nccl",
                                 "NCCL collectives and point-to-point on device buffers, one rank per GPU",
                                 built.c_str(),
                                 [] { return fb::gpu::absent_reason(); },
                                 [] { return fb::make_nccl_backend(fb::gpu::cuda_devices(), fb::nccl::cuda_nccl()); },
                                 nullptr,
                                 fb::nccl_versions};
  return &api;
}
