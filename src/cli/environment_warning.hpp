// `run`'s warning about the ranks' environment: a sink that keeps the
// inventory lines and, when the run ends, prints once what in the recorded
// NCCL, UCX and Open MPI settings distorts the figures or hides a fault
// (core/environment_audit.hpp), with the ranks and the fix. A warning only:
// `check`'s environment rule is what fails on it.
#pragma once

#include <cstdio>
#include <memory>

#include "fabricbench/core/sink.hpp"

namespace fb::cli {

std::unique_ptr<RowSink> make_environment_warning_sink(std::FILE* out);

}  // namespace fb::cli
