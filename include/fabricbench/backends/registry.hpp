// Which backends exist and whether each is usable here: the host-MPI backend
// is built in; the GPU backends (nccl, cuda, mpi-cuda) and the GPU tools
// (placement, cuBLAS GEMM: gpu.hpp) are plugins, shared libraries loaded at
// run time (plugin.hpp), so the binary links no CUDA library and starts on
// any node. A plugin that is missing or does not load is listed with why.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/core/backend.hpp"

namespace fb {

// The backends this build knows, in the registry's order.
struct BackendInfo {
  std::string name;
  std::string summary;
  // Empty when usable here; otherwise why not (plugin missing or refused, no GPU...).
  std::function<std::string()> absent_reason;
  std::function<std::unique_ptr<Backend>()> make;
  // The ops a sweep runs when --ops is not given; empty = the six collectives.
  std::span<const Op> default_ops{};
  // `run --placement` when not given: what the tool its users hold it
  // against measures (IMB and OSU one placement; nccl-tests both).
  std::string_view default_placement = "both";
};

const std::vector<BackendInfo>& backend_registry();
const BackendInfo* find_backend(std::string_view name);
std::string backend_names();

// One plugin file as the registry found it.
struct PluginStatus {
  std::string name;        // "nccl": the file libfabricbench-nccl.so
  std::string path;        // the file tried; "" when there is no plugin folder
  bool loaded = false;
  std::string why;         // why it did not load (dlopen's error, ABI refused, not found); "" when loaded
  std::string built_with;  // the plugin's own build identity, once loaded
};

// The folder plugins are loaded from: $FABRICBENCH_PLUGIN_DIR when set,
// else ../lib/fabricbench beside the binary (installed), else lib/fabricbench
// beside it (build tree). "" with `why` when none exists.
struct PluginDir {
  std::string path;
  std::string why;
};
PluginDir plugin_dir();

// Every plugin known or found in the folder, loading each (for --version).
std::vector<PluginStatus> plugin_statuses();

}  // namespace fb
