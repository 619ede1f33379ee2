// Versions of the CUDA runtime and NCCL this binary is linked with. Only this
// file sees their headers, and only when the build found them.
#include <fmt/format.h>

#include "topo_internal.hpp"

#if FB_TOPO_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#if FB_TOPO_HAVE_NCCL
#include <nccl.h>
#endif

namespace fb::topo {

std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

LinkedVersions linked_versions() {
  LinkedVersions v;
#if FB_TOPO_HAVE_CUDA
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess && runtime > 0) {
    v.cuda_runtime = cuda_version_text(runtime);
  } else {
    v.cuda_runtime = Fact<std::string>::unknown("cudaRuntimeGetVersion failed");
  }
  // 0 with success means no driver: the runtime loaded, libcuda did not.
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
    v.cuda_driver = cuda_version_text(driver);
  } else {
    v.cuda_driver = Fact<std::string>::unknown("cudaDriverGetVersion: no CUDA driver installed");
  }
#else
  v.cuda_runtime = v.cuda_driver = Fact<std::string>::unknown("fabricbench was built without CUDA");
#endif
#if FB_TOPO_HAVE_NCCL
  int code = 0;
  if (ncclGetVersion(&code) == ncclSuccess && code > 0) {
    // NCCL_VERSION_CODE: 1000 * major + 100 * minor + patch up to 2.8, then
    // 10000 * major + 100 * minor + patch.
    v.nccl = code >= 10000 ? fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100)
                           : fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
  } else {
    v.nccl = Fact<std::string>::unknown("ncclGetVersion failed");
  }
#else
  v.nccl = Fact<std::string>::unknown("fabricbench was built without NCCL");
#endif
  return v;
}

}  // namespace fb::topo
