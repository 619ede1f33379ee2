// `check --quote FILE --quote-name NAME`: what a price quote sold, as the
// hardware rules (accept/rule.hpp) the check judges beside its profile's.
// Here in cli because it reads model's quotes and presets and makes
// accept's rules, and the module table lets only cli include both.
#pragma once

#include <string>
#include <vector>

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

// Reads FILE (and the presets file it names) and appends its quote's rules to `rules`.
void add_quote_rules(const std::string& file, const std::string& quote_name, std::vector<accept::Rule>& rules);

}  // namespace fb::cli
