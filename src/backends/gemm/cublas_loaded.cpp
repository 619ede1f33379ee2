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
constexpr const char* kCublas = "libcublas.so." FB_STR(CUBLAS_VER_MAJOR);
constexpr const char* kCublasLt = "libcublasLt.so." FB_STR(CUBLAS_VER_MAJOR);

template <typename Calls>
struct Loaded {
  Calls calls;
  std::string error;  // empty when every call was found
};

// One library's handle, kept loaded for the process (unloading CUDA
// libraries at exit buys nothing); nullptr with `error` set when not found.
void* open_library(const char* soname, std::string& error) {
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib) return lib;
  const char* e = dlerror();
  error = fmt::format("{} not loaded: {}", soname, e ? e : soname);
  // A toolkit outside the loader's path: cuBLAS sits beside the CUDA runtime this binary uses.
  Dl_info runtime{};
  if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &runtime) && runtime.dli_fname) {
    const std::string dir = std::filesystem::path(runtime.dli_fname).parent_path().string();
    lib = dlopen((dir + "/" + soname).c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (lib) error.clear();
  return lib;
}

template <typename F>
void find(void* lib, const char* soname, F& f, const char* symbol, std::string& error) {
  f = reinterpret_cast<F>(dlsym(lib, symbol));
  if (!f && error.empty()) error = fmt::format("{} has no {}", soname, symbol);
}

// One library's calls: `find_calls(calls, at)` names each through
// `at(member, "symbol")`; the first one missing is the error.
template <typename Calls, typename FindCalls>
Loaded<Calls> load(const char* soname, FindCalls find_calls) {
  Loaded<Calls> out;
  void* lib = open_library(soname, out.error);
  if (!lib) return out;
  find_calls(out.calls, [&](auto& f, const char* symbol) { find(lib, soname, f, symbol, out.error); });
  return out;
}

Loaded<CublasCalls> load_cublas() {
  return load<CublasCalls>(kCublas, [](CublasCalls& c, auto at) {
    at(c.create, "cublasCreate_v2");
    at(c.destroy, "cublasDestroy_v2");
    at(c.set_stream, "cublasSetStream_v2");
    at(c.gemm_ex, "cublasGemmEx");
    at(c.status_name, "cublasGetStatusName");
    at(c.status_string, "cublasGetStatusString");
  });
}

Loaded<CublasLtCalls> load_cublas_lt() {
  return load<CublasLtCalls>(kCublasLt, [](CublasLtCalls& c, auto at) {
    at(c.create, "cublasLtCreate");
    at(c.destroy, "cublasLtDestroy");
    at(c.desc_create, "cublasLtMatmulDescCreate");
    at(c.desc_destroy, "cublasLtMatmulDescDestroy");
    at(c.desc_set, "cublasLtMatmulDescSetAttribute");
    at(c.layout_create, "cublasLtMatrixLayoutCreate");
    at(c.layout_destroy, "cublasLtMatrixLayoutDestroy");
    at(c.preference_create, "cublasLtMatmulPreferenceCreate");
    at(c.preference_destroy, "cublasLtMatmulPreferenceDestroy");
    at(c.preference_set, "cublasLtMatmulPreferenceSetAttribute");
    at(c.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    at(c.matmul, "cublasLtMatmul");
  });
}

template <typename Calls>
const Calls& loaded_calls(const Loaded<Calls>& loaded) {
  if (!loaded.error.empty()) throw RunError(loaded.error);
  return loaded.calls;
}

}  // namespace

const CublasCalls& cublas() {
  static const Loaded<CublasCalls> loaded = load_cublas();
  return loaded_calls(loaded);
}

const CublasLtCalls& cublas_lt() {
  static const Loaded<CublasLtCalls> loaded = load_cublas_lt();
  return loaded_calls(loaded);
}

}  // namespace fb::gpu
