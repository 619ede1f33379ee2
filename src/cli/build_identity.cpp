#include "build_identity.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "fabricbench/backends/backend.hpp"
#include "fabricbench/build_commit.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/version.hpp"

namespace fb::cli {

nlohmann::ordered_json build_identity() {
  return {
      {"version", kVersion},
      {"git_commit", kGitCommit},
      {"git_dirty", kGitDirty},
      {"build_type", kBuildType},
      {"compiler", kCompiler},
      {"mpi_library", MpiSession::library_version()},
      {"cuda_built", kCudaBuilt},
      {"nccl_built", kNcclBuilt},
  };
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
