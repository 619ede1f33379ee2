// Loading plugin files (plugin.hpp): dlopen, the ABI stamp, the entry point.
// Each plugin is loaded at most once per process and never unloaded (its
// code backs the backends it made).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/backends/plugin.hpp"
#include "fabricbench/backends/registry.hpp"

namespace fb::plugins {

struct Loaded {
  PluginStatus status;
  const PluginApi* api = nullptr;  // null when it did not load: status.why says why
};

// The plugin file's name: "libfabricbench-nccl.so".
std::string file_name(std::string_view name);

// dlopen `path` and check its stamp. Never throws: a failure is status.why.
Loaded load_file(const std::string& name, const std::string& path);

// The plugin `name` from plugin_dir(), loaded once (thread-safe).
const Loaded& load(std::string_view name);

// The plugins the build makes, in the registry's order, and the names of the
// other plugin files in the folder (a plugin need not be one of ours).
std::vector<std::string> known();
std::vector<std::string> found_elsewhere();

// Why the build has no plugin `name` ("" when it makes one).
[[nodiscard]] std::string why_not_built(std::string_view name);

}  // namespace fb::plugins
