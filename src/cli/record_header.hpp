// The `run` header line every command's results record starts with.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "fabricbench/backends/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/scope.hpp"

namespace fb::cli {

// UTC now, ISO 8601 ("2026-11-29T10:00:00Z").
std::string utc_now();

// The header keys common to every command (docs/results-schema.md); the
// command adds its own (run: options; check: profile, sweeps).
nlohmann::ordered_json record_header(std::string_view command, int argc, char** argv, const Comm& world,
                                     const NodeMap& nodes, const Backend& backend);

}  // namespace fb::cli
