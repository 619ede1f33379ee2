// What a plugin file exports. A plugin is a shared library
// (libfabricbench-<name>.so) the registry loads at run time with dlopen; it
// links CUDA, NCCL or cuBLAS itself, so the binary does not. C++ types cross
// the boundary (Backend, std::string), so a plugin must come from the same
// build as the binary: the registry first calls fabricbench_plugin_abi(), a
// plain C function, and refuses the plugin, with a message, unless both the
// ABI version and the layout fingerprint match its own. Only then does it
// call fabricbench_plugin().
//
// Bump kPluginAbi when anything a plugin sees changes meaning: the port
// (core/backend.hpp), gpu.hpp, PluginApi, or the core functions plugins call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabricbench/backends/gpu.hpp"
#include "fabricbench/core/backend.hpp"

namespace fb {

inline constexpr std::uint32_t kPluginAbi = 3;  // 2: GpuTools::simulated(); 3: StepComputeSpec, GemmCompute copies

// A library a plugin loaded, as this process sees it ("cuda_runtime" "13.0";
// "nccl" "2.28.9"); `why` instead of a version when it cannot say.
struct LibraryVersion {
  std::string name;
  std::string version;
  std::string why;
};

// A change of size in what crosses the boundary changes this number, so a
// plugin built from other headers is refused even if nobody bumped kPluginAbi.
constexpr std::uint64_t plugin_layout_fingerprint() {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the sizes
  for (std::uint64_t v : {sizeof(OpSpec), sizeof(Support), sizeof(IterationTimes), sizeof(RunOptions),
                          sizeof(Layout), sizeof(GpuPlacement), sizeof(GemmSpec), sizeof(GemmResult),
                          sizeof(TimeStats), sizeof(LibraryVersion), sizeof(std::string), sizeof(std::unique_ptr<Backend>)}) {
    h ^= v;
    h *= 1099511628211ull;
  }
  return h;
}

struct PluginAbiStamp {
  std::uint32_t abi;
  std::uint64_t layout;
};

struct PluginApi {
  const char* name;        // "nccl", the file's <name>
  const char* summary;     // one line for --help
  const char* built_with;  // "fabricbench 0.1.0 (abc123), CUDA 13.0.88, NCCL 2.28.9"
  // "" when usable on this host; otherwise why not (no GPU, MPI not CUDA-aware...).
  std::string (*absent_reason)();
  // The backend of the same name; null for a plugin without one (gemm).
  std::unique_ptr<Backend> (*make_backend)();
  // The GPU tools; null for a plugin without them.
  const GpuTools* (*gpu_tools)();
  // The versions of the libraries it loaded, for the record's inventory.
  std::vector<LibraryVersion> (*library_versions)();
};

}  // namespace fb

// A plugin defines both, with default visibility (everything else of it is hidden).
#define FB_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

FB_PLUGIN_EXPORT fb::PluginAbiStamp fabricbench_plugin_abi();
FB_PLUGIN_EXPORT const fb::PluginApi* fabricbench_plugin();

// The ABI stamp, as every plugin writes it (a test plugin may build with another).
#ifndef FB_PLUGIN_ABI_BUILT
#define FB_PLUGIN_ABI_BUILT ::fb::kPluginAbi
#endif
#define FB_DEFINE_PLUGIN_ABI() \
  FB_PLUGIN_EXPORT fb::PluginAbiStamp fabricbench_plugin_abi() { return {FB_PLUGIN_ABI_BUILT, fb::plugin_layout_fingerprint()}; }
