// Fabric health (issue 36): the error counters each node's leader reads
// around every measured row (topo/counters.hpp), and the section `run` and
// `check` print when one moved. A healthy run prints nothing.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "fabricbench/core/row_counters.hpp"
#include "fabricbench/core/scope.hpp"
#include "fabricbench/core/sink.hpp"

namespace fb::cli {

// The reader for this rank's node, under "/" or FABRICBENCH_COUNTERS_ROOT (a
// test hook: a copied tree, "{node}" in it replaced by the node's index so
// each emulated node reads its own). Throws UsageError when that root is no
// folder.
std::unique_ptr<RowCounters> make_node_counters(const NodeMap& nodes);

// The section, at the end of the run: one line per node, device and counter
// that moved, with the total delta and the rows it moved in. `command`
// prefixes each line ("fabricbench run").
std::unique_ptr<RowSink> make_fabric_health_sink(std::FILE* out, std::string command);

}  // namespace fb::cli
