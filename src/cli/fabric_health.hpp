// Fabric health (issue 36): the error counters each node's leader reads
// around every measured row (topo/counters.hpp), and the section `run` and
// `check` print when one moved. A healthy run prints nothing.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "fabricbench/core/row_counters.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sink.hpp"

namespace fb::cli {

// --counters of run, check and pairs: where each node's leader reads its
// error counters. "/" (the default) is the node's own /sys and /proc; a
// folder is a copied tree (tests: "{node}" in it becomes the node's index so
// each emulated node reads its own); "off" reads nothing, and the record
// says so (its header's `counters`), so no counters rule can pass on it.
// FABRICBENCH_COUNTERS_ROOT gives the default.
inline constexpr const char* kCountersOff = "off";
void add_counters_option(CLI::App& app, std::string& where);

// The reader for this rank's node under `where`; null for "off". Throws
// UsageError when that root is no folder.
std::unique_ptr<RowCounters> make_node_counters(const NodeMap& nodes, const std::string& where);

// The section, at the end of the run: one line per node, device and counter
// that moved, with the total delta and the rows it moved in. `command`
// prefixes each line ("fabricbench run").
std::unique_ptr<RowSink> make_fabric_health_sink(std::FILE* out, std::string command);

}  // namespace fb::cli
