// `run`'s warning about bimodal rows: a sink that, when the run ends, prints
// each row whose iteration times fell into two modes (measurement `modes`,
// core/modes.hpp) with both modes and their shares: its median is a figure
// no iteration had. A warning only: `check`'s bimodal rule fails on it.
#pragma once

#include <cstdio>
#include <memory>

#include "fabricbench/core/sink.hpp"

namespace fb::cli {

std::unique_ptr<RowSink> make_bimodal_warning_sink(std::FILE* out);

}  // namespace fb::cli
