#include "plugin_loader.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "fabricbench/core/install_layout.hpp"
#include "fabricbench/version.hpp"

namespace fb {
namespace {

constexpr std::string_view kPrefix = "libfabricbench-";
constexpr std::string_view kSuffix = ".so";

bool is_dir(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

PluginDir find_plugin_dir() {
  if (const char* env = std::getenv("FABRICBENCH_PLUGIN_DIR"); env && *env) {
    if (is_dir(env)) return {env, ""};
    return {"", fmt::format("FABRICBENCH_PLUGIN_DIR={} is not a folder", env)};
  }
  const std::string bin = binary_dir();
  if (bin.empty()) return {"", "the binary's folder is unknown (/proc/self/exe unreadable): set FABRICBENCH_PLUGIN_DIR"};
  // Installed: bin/fabricbench and lib/fabricbench/; build tree: build/fabricbench and build/lib/fabricbench/.
  // Without "..": the folder names in messages and --version are the plain ones.
  const std::string installed = bin.substr(0, bin.rfind('/')) + "/lib/fabricbench";
  const std::string build_tree = bin + "/lib/fabricbench";
  if (is_dir(installed)) return {installed, ""};
  if (is_dir(build_tree)) return {build_tree, ""};
  return {"", fmt::format("no plugin folder ({} and {} do not exist): install the plugins, or set "
                          "FABRICBENCH_PLUGIN_DIR",
                          installed, build_tree)};
}

}  // namespace

PluginDir plugin_dir() {
  static const PluginDir dir = find_plugin_dir();
  return dir;
}

namespace plugins {

std::string file_name(std::string_view name) { return fmt::format("{}{}{}", kPrefix, name, kSuffix); }

std::vector<std::string> known() { return {"nccl", "cuda", "mpi-cuda", "gemm"}; }

std::string why_not_built(std::string_view name) {
  std::istringstream built(kBuiltPlugins);
  for (std::string n; built >> n;)
    if (n == name) return {};
  if (!kBuiltWithCuda) return kGpuAbsentReason;
  if (name == "nccl") return kNcclAbsentReason;
  return "this build makes no such plugin";
}

std::vector<std::string> found_elsewhere() {
  std::vector<std::string> out;
  const PluginDir dir = plugin_dir();
  if (dir.path.empty()) return out;
  DIR* d = opendir(dir.path.c_str());
  if (!d) return out;
  const auto ours = known();
  while (const dirent* e = readdir(d)) {
    const std::string_view f = e->d_name;
    if (f.size() <= kPrefix.size() + kSuffix.size() || !f.starts_with(kPrefix) || !f.ends_with(kSuffix)) continue;
    std::string name(f.substr(kPrefix.size(), f.size() - kPrefix.size() - kSuffix.size()));
    if (std::find(ours.begin(), ours.end(), name) == ours.end()) out.push_back(std::move(name));
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Loaded load_file(const std::string& name, const std::string& path) {
  Loaded out;
  out.status.name = name;
  out.status.path = path;
  // RTLD_LOCAL: the CUDA, NCCL and cuBLAS a plugin brings stay its own; it
  // resolves fabricbench's functions from the binary.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    out.status.why = fmt::format("plugin {} did not load: {}", path, err ? err : "dlopen failed");
    return out;
  }
  using StampFn = PluginAbiStamp (*)();
  using EntryFn = const PluginApi* (*)();
  auto stamp_fn = reinterpret_cast<StampFn>(dlsym(handle, "fabricbench_plugin_abi"));
  auto entry_fn = reinterpret_cast<EntryFn>(dlsym(handle, "fabricbench_plugin"));
  if (!stamp_fn || !entry_fn) {
    out.status.why = fmt::format("{} is not a fabricbench plugin (no fabricbench_plugin_abi/fabricbench_plugin)", path);
    return out;
  }
  // Nothing of C++ crosses before both stamps match.
  const PluginAbiStamp stamp = stamp_fn();
  if (stamp.abi != kPluginAbi) {
    out.status.why = fmt::format("plugin {} was built for plugin ABI {}, this fabricbench takes ABI {}: install the "
                                 "plugins of the same build as the binary",
                                 path, stamp.abi, kPluginAbi);
    return out;
  }
  if (stamp.layout != plugin_layout_fingerprint()) {
    out.status.why = fmt::format("plugin {} was built from other headers (layout {:#x}, this fabricbench {:#x}): install "
                                 "the plugins of the same build as the binary",
                                 path, stamp.layout, plugin_layout_fingerprint());
    return out;
  }
  const PluginApi* api = entry_fn();
  if (!api || !api->name || name != api->name) {
    out.status.why = fmt::format("plugin {} calls itself '{}', not '{}'", path, api && api->name ? api->name : "",
                                 name);
    return out;
  }
  out.api = api;
  out.status.loaded = true;
  out.status.built_with = api->built_with ? api->built_with : "";
  return out;
}

const Loaded& load(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, Loaded, std::less<>> cache;
  const std::lock_guard lock(mutex);
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  const std::string n(name);
  Loaded loaded;
  const PluginDir dir = plugin_dir();
  const std::string path = dir.path.empty() ? "" : dir.path + "/" + file_name(n);
  if (dir.path.empty()) {
    loaded.status = {n, "", false, fmt::format("plugin {}: {}", file_name(n), dir.why), ""};
  } else if (access(path.c_str(), F_OK) != 0) {
    const std::string why = why_not_built(n);
    loaded.status = {n, path, false,
                     why.empty() ? fmt::format("plugin {} not found in {} (installed without it? "
                                               "FABRICBENCH_PLUGIN_DIR names another folder)",
                                               file_name(n), dir.path)
                                 : why,
                     ""};
  } else {
    loaded = load_file(n, path);
  }
  return cache.emplace(n, std::move(loaded)).first->second;
}

}  // namespace plugins
}  // namespace fb
