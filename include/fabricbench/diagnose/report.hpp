// A node's sample series -> its `diagnosis` record lines (one per GPU, one
// for the node), the table rank 0 prints, and the series as JSON (what
// --samples-out writes and --replay reads back).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "fabricbench/core/record_lines.hpp"
#include "fabricbench/diagnose/samples.hpp"
#include "fabricbench/diagnose/verdict.hpp"

namespace fb::diagnose {

// The GPU lines in NVML order, then the node's line.
std::vector<DiagnosisLine> diagnose(const NodeSamples& node, const Thresholds& t);

// The table: one row per line, then each line's reason, then the thresholds.
std::string format_table(const std::vector<DiagnosisLine>& lines, const Thresholds& t);

// A series as JSON and back. Unknown readings are null, with the first
// reason per figure under the series' "unknown". from_json throws
// std::runtime_error naming what is missing or mistyped.
nlohmann::ordered_json to_json(const NodeSamples& node);
NodeSamples node_samples_from_json(const nlohmann::ordered_json& j);

}  // namespace fb::diagnose
