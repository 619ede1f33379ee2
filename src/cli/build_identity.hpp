// What this binary is: version, git commit (and whether the tree had
// changes), build type, compiler, the MPI library it runs on, the CUDA and
// NCCL it was built against. `fabricbench --version` prints it with which
// backends are usable here; every record header carries it as "build", so a
// figure can be traced to the exact code that measured it.
#pragma once

#include <string>

#include "fabricbench/core/record_lines.hpp"

namespace fb::cli {

// Facts fixed at build time plus the MPI library (asked without MPI_Init).
BuildRef build_identity();
// The --version text: build_identity() as lines, then each plugin (loaded,
// or why not) and each backend and whether it is usable here.
[[nodiscard]] std::string version_text();

}  // namespace fb::cli
