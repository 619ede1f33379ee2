// The first line of every record a command writes: what ran, when, on which
// ranks and nodes. `run` adds its backend and options; `topo` uses it as is.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/scope.hpp"

namespace fb::cli {

// UTC now, ISO 8601 ("2026-11-29T10:00:00Z").
std::string utc_now();

nlohmann::ordered_json record_header(std::string_view command, int argc, char** argv, const Comm& world,
                                     const NodeMap& nodes);

}  // namespace fb::cli
