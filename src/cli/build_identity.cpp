#include "build_identity.hpp"

#include <fmt/format.h>

#include "fabricbench/backends/backend.hpp"
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
  out += "  backends\n";
  for (const auto& b : backend_registry()) {
    const std::string absent = b.absent_reason();
    out += fmt::format("    {:<9} {}\n", b.name, absent.empty() ? "usable" : "not usable: " + absent);
  }
  return out;
}

}  // namespace fb::cli
