// `check --quote FILE --quote-name NAME`: what a price quote sold, as the
// hardware rules (accept/rule.hpp) the check judges beside its profile's.
// Here in cli because it reads model's quotes and presets and makes
// accept's rules, and the module table lets only cli include both.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricbench/accept/profile.hpp"
#include "fabricbench/accept/rule.hpp"
#include "fabricbench/model/presets.hpp"
#include "fabricbench/model/quotes.hpp"

namespace fb::cli {

// One rule per promise (GPU model, GPUs per node, NICs per node at the
// network preset's rate, unless a one-node quote names no network; nodes), each named with the quote and the preset
// key its figure came from. Throws fb::UsageError naming the quote and key:
// an unknown quote name, an unknown preset, a network that is a results
// file, a GPU preset without nvml_names.
std::vector<accept::Rule> quote_rules(const model::QuoteSet& set, const std::string& quote_name,
                                      const model::Presets& presets, const std::string& file);

// The busbw its network promises between nodes, per rank: all_reduce at the
// largest size the profile's `sweeps` measure on a rail (else inter), at
// least 0.80 of the line rate of the NICs each rank there drives. None for a
// quote of one node or without a network.
std::optional<accept::Rule> quote_busbw_rule(const model::QuoteSet& set, const std::string& quote_name,
                                             const model::Presets& presets, const std::string& file,
                                             const std::vector<accept::Sweep>& sweeps);

// Reads FILE (and the presets file it names) and appends its quote's rules
// (the hardware promises, then the busbw promise) to the profile's.
void add_quote_rules(const std::string& file, const std::string& quote_name, accept::Profile& profile);

}  // namespace fb::cli
