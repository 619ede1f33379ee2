// What every subcommand launched under mpirun/srun shares: the `run` header
// its results record starts with, and stopping the whole job when this rank
// cannot go on.
#pragma once

#include <functional>
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

// Returns body()'s exit code. When it throws (a backend call failed on this
// rank), the other ranks may be blocked in the same op: log the error and
// abort the whole job with exit code 3 rather than leave it hanging.
int run_or_abort(const std::function<int()>& body);

}  // namespace fb::cli
