// `run`'s warning about curves that are not smooth: a sink that keeps the
// rows and, when the sweep ends, prints each size whose time jumps above its
// neighbours' trend or whose busbw falls (accept/smoothness.hpp, at
// kRunWarningLimits), naming the ranks. A warning only: the record, the
// table and the exit code stay as they are.
#pragma once

#include <cstdio>
#include <memory>

#include "fabricbench/core/sink.hpp"

namespace fb::cli {

std::unique_ptr<RowSink> make_curve_warning_sink(std::FILE* out);

}  // namespace fb::cli
