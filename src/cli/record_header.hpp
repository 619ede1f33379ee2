// The first line of every record a command writes: what ran, when, on which
// ranks and nodes. `run` adds its backend and options; `topo` uses it as is.
#pragma once

#include <string>
#include <string_view>

#include "fabricbench/core/backend.hpp"
#include "fabricbench/core/comm.hpp"
#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/core/scope.hpp"

namespace fb::cli {

// UTC now, ISO 8601 ("2026-11-29T10:00:00Z").
std::string utc_now();

// Collective: the run's id, made on rank 0 and handed to every rank, so the
// header, every measurement line and every CSV row of this run carry it.
std::string shared_run_id(const Comm& world);

RunHeader record_header(std::string_view command, int argc, char** argv, const Comm& world, const NodeMap& nodes,
                        std::string run_id);
// The backend that made the record: its name, its library's version, and
// whether it ran on the test doubles (RunHeader::simulated).
void name_backend(RunHeader& header, const Backend& backend);

}  // namespace fb::cli
