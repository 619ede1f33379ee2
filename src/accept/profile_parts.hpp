// The pieces of a profile, parsed one YAML entry at a time (internal).
#pragma once

#include <cstddef>
#include <vector>

#include "fabricbench/accept/profile.hpp"
#include "yaml_reader.hpp"

namespace fb::accept {

Sweep parse_sweep(const Field& f, bool p2p, std::size_t index);
PairsPlan parse_pairs(const Field& f);
Rule parse_rule(const Field& f);
// The keys of one kind each (eval_smoothness.cpp, eval_mixed_gpus.cpp).
void parse_smoothness(const Field& f, Rule& r);
void parse_mixed_gpus(const Field& f, Rule& r);
void parse_environment_rule(const Field& f, Rule& r);
void parse_hardware(const Field& f, Rule& r);  // eval_hardware.cpp
// A row rule whose op or scope no sweep runs can never be judged: say so now.
void check_rule_against_sweeps(const Rule& rule, const Field& f, const std::vector<Sweep>& sweeps);

}  // namespace fb::accept
