#include "cublas_loaded.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "fabricbench/core/errors.hpp"

namespace fb::gpu {
namespace {

#define FB_STR2(x) #x
#define FB_STR(x) FB_STR2(x)
// The major version the code was compiled against: its ABI.
constexpr const char* kSoname = "libcublas.so." FB_STR(CUBLAS_VER_MAJOR);

struct Loaded {
  CublasCalls calls;
  std::string error;  // empty when every call was found
};

template <typename F>
void find(void* lib, F& f, const char* symbol, std::string& error) {
  f = reinterpret_cast<F>(dlsym(lib, symbol));
  if (!f && error.empty()) error = fmt::format("{} has no {}", kSoname, symbol);
}

Loaded load() {
  Loaded out;
  // Kept loaded for the process: unloading CUDA libraries at exit buys nothing.
  void* lib = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    out.error = fmt::format("cuBLAS not loaded: {}", e ? e : kSoname);
    // A toolkit outside the loader's path: cuBLAS sits beside the CUDA runtime this binary uses.
    Dl_info runtime{};
    if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &runtime) && runtime.dli_fname) {
      const std::string dir = std::filesystem::path(runtime.dli_fname).parent_path().string();
      lib = dlopen((dir + "/" + kSoname).c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (!lib) return out;
    out.error.clear();
  }
  CublasCalls& c = out.calls;
  find(lib, c.create, "cublasCreate_v2", out.error);
  find(lib, c.destroy, "cublasDestroy_v2", out.error);
  find(lib, c.set_stream, "cublasSetStream_v2", out.error);
  find(lib, c.gemm_ex, "cublasGemmEx", out.error);
  find(lib, c.status_name, "cublasGetStatusName", out.error);
  find(lib, c.status_string, "cublasGetStatusString", out.error);
  return out;
}

}  // namespace

const CublasCalls& cublas() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) throw RunError(loaded.error);
  return loaded.calls;
}

}  // namespace fb::gpu
