// What every plugin says about itself: the fabricbench build it came from
// and the CUDA and NCCL it was compiled against ("built_with" in --version).
#pragma once

#include <string>

#include "fabricbench/build_commit.hpp"
#include "fabricbench/version.hpp"


namespace fb::plugin {

// "fabricbench 0.1.0 (28c4bff75696), CUDA 13.0.88"
inline std::string built_with(bool with_nccl) {
  std::string out = std::string("fabricbench ") + kVersion + " (" + kGitCommit + (kGitDirty ? ", dirty" : "") +
                    "), CUDA " + kCudaBuilt;
  if (with_nccl) out += std::string(", NCCL ") + kNcclBuilt;
  return out;
}

}  // namespace fb::plugin
