#include "build_identity.hpp"

#include <fmt/format.h>

#include "fabricbench/backends/registry.hpp"
#include "fabricbench/build_commit.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/version.hpp"

namespace fb::cli {

BuildRef build_identity() {
  return {kVersion, kGitCommit, kGitDirty, kBuildType, kCompiler, MpiSession::library_version(), kCudaBuilt,
          kNcclBuilt};
}

std::string version_text() {
  std::string out = fmt::format("fabricbench {}\n", kVersion);
  out += fmt::format("  git commit   {}{}\n", kGitCommit, kGitDirty ? " (with uncommitted changes)" : "");
  out += fmt::format("  build        {}, {}\n", *kBuildType ? kBuildType : "no build type", kCompiler);
  out += fmt::format("  MPI library  {}\n", MpiSession::library_version());
  out += fmt::format("  built with   CUDA {}, NCCL {}\n", *kCudaBuilt ? kCudaBuilt : "no",
                     *kNcclBuilt ? kNcclBuilt : "no");
  const PluginDir dir = plugin_dir();
  out += fmt::format("  plugins      {}\n", dir.path.empty() ? "none: " + dir.why : dir.path);
  for (const auto& p : plugin_statuses())
    out += fmt::format("    {:<9} {}\n", p.name, p.loaded ? "loaded (" + p.built_with + ")" : "not loaded: " + p.why);
  out += "  backends\n";
  for (const auto& b : backend_registry()) {
    const std::string absent = b.absent_reason();
    out += fmt::format("    {:<9} {}\n", b.name, absent.empty() ? "usable" : "not usable: " + absent);
  }
  return out;
}

}  // namespace fb::cli
