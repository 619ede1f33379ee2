// The first line of every record a command writes: what ran, when, on which
// ranks and nodes. `run` adds its backend and options; `topo` uses it as is.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/scope.hpp"

namespace fb::cli {

nlohmann::ordered_json record_header(std::string_view command, int argc, char** argv, const Comm& world,
                                     const NodeMap& nodes);

}  // namespace fb::cli
