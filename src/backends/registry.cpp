#include "fabricbench/backends/registry.hpp"

#include <fmt/format.h>

#include "fabricbench/backends/gpu.hpp"
#include "fabricbench/version.hpp"
#include "fabricbench/backends/library_versions.hpp"
#include "fabricbench/core/errors.hpp"
#include "mpi_host/mpi_host.hpp"
#include "plugin_loader.hpp"

namespace fb {
namespace {

// "" when the plugin's backend is usable here; otherwise why not.
[[nodiscard]] std::string plugin_absent(const std::string& name) {
  const plugins::Loaded& p = plugins::load(name);
  if (!p.api) return p.status.why;
  if (!p.api->make_backend) return fmt::format("plugin {} has no backend", p.status.path);
  return p.api->absent_reason ? p.api->absent_reason() : std::string();
}

// A backend that lives in plugin `name`, loaded when first asked about, so
// a host-only run loads no GPU library.
BackendInfo plugin_backend(std::string name, std::string summary, std::span<const Op> default_ops = {}) {
  return {name, std::move(summary), [name] { return plugin_absent(name); },
          [name]() -> std::unique_ptr<Backend> {
            const plugins::Loaded& p = plugins::load(name);
            if (!p.api || !p.api->make_backend) throw UsageError(plugin_absent(name));
            return p.api->make_backend();
          },
          default_ops};
}

}  // namespace

// One entry per backend, like a testcase registry: a name, a line for
// --help, why it is absent on this machine (empty when usable), a factory.
const std::vector<BackendInfo>& backend_registry() {
  static const std::vector<BackendInfo> registry = [] {
    std::vector<BackendInfo> r;
    r.push_back({"mpi",
                 "MPI collectives and point-to-point on host memory",
                 [] { return std::string(); },
                 make_mpi_host_backend,
                 {},
                 "one"});
    // The GPU backends are always listed; without their plugin, a driver or a device they say why.
    r.push_back(plugin_backend("nccl", "NCCL collectives and point-to-point on device buffers, one rank per GPU"));
    // The same default ops with or without the plugin: options resolve alike everywhere.
    r.push_back(plugin_backend("cuda", "copy paths inside a GPU node (device, host<->device, peer GPUs)", copy_ops()));
    r.push_back(plugin_backend("mpi-cuda", "MPI on device buffers (a CUDA-aware MPI)"));
    r.back().default_placement = "one";  // as OSU's device-buffer tests
    for (const auto& other : plugins::found_elsewhere())
      r.push_back(plugin_backend(other, fmt::format("from plugin {}", plugins::file_name(other))));
    return r;
  }();
  return registry;
}

const BackendInfo* find_backend(std::string_view name) {
  for (const auto& b : backend_registry())
    if (b.name == name) return &b;
  return nullptr;
}

std::string backend_names() {
  std::string out;
  for (const auto& b : backend_registry()) out += (out.empty() ? "" : ", ") + b.name;
  return out;
}

std::vector<PluginStatus> plugin_statuses() {
  std::vector<PluginStatus> out;
  for (const auto& name : plugins::known()) out.push_back(plugins::load(name).status);
  for (const auto& name : plugins::found_elsewhere()) out.push_back(plugins::load(name).status);
  return out;
}

const GpuTools* gpu_tools(std::string* why) {
  const plugins::Loaded& p = plugins::load("gemm");
  const GpuTools* tools = p.api && p.api->gpu_tools ? p.api->gpu_tools() : nullptr;
  if (!tools && why) *why = p.api ? fmt::format("plugin {} has no GPU tools", p.status.path) : p.status.why;
  return tools;
}

std::string gpu_absent_reason() {
  std::string why;
  const GpuTools* tools = gpu_tools(&why);
  return tools ? tools->absent_reason() : why;
}

topo::LinkedVersions loaded_library_versions() {
  using F = topo::Fact<std::string>;
  topo::LinkedVersions v;
  v.cuda_runtime = v.cuda_driver = F::unknown(kBuiltWithCuda ? "no GPU plugin loaded" : kGpuAbsentReason);
  v.nccl = F::unknown(kBuiltWithNccl ? "the nccl plugin did not load" : "fabricbench was built without NCCL");
  bool have_cuda = false;
  for (const auto& name : {"nccl", "cuda", "mpi-cuda", "gemm"}) {
    const plugins::Loaded& p = plugins::load(name);
    if (!p.api) {
      if (std::string_view(name) == "nccl" && kBuiltWithNccl) v.nccl = F::unknown(p.status.why);
      continue;
    }
    if (!p.api->library_versions) continue;
    for (const auto& lib : p.api->library_versions()) {
      const F fact = lib.why.empty() ? F(lib.version) : F::unknown(lib.why);
      if (lib.name == "nccl") v.nccl = fact;
      if (!have_cuda && lib.name == "cuda_runtime") v.cuda_runtime = fact;
      if (!have_cuda && lib.name == "cuda_driver") v.cuda_driver = fact;
    }
    have_cuda = true;
  }
  return v;
}

}  // namespace fb
