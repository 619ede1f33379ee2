// `run`'s warning about cliffs: a sink that keeps the rows and, when the sweep
// ends, prints each op and scope whose busbw falls off a cliff
// (core/cliff.hpp), where it starts, how far it falls and the ranks. Only
// cliffs: a one-size spike or a sag as buffers outgrow the caches is what a
// healthy shared host shows, and `check`'s smoothness rule judges those at
// margins a profile states. A warning only: the record, the table and the exit
// code stay as they are.
#pragma once

#include <cstdio>
#include <memory>

#include "fabricbench/core/sink.hpp"

namespace fb::cli {

std::unique_ptr<RowSink> make_curve_warning_sink(std::FILE* out);

}  // namespace fb::cli
