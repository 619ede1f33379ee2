// --presets DIR and --presets-add FILE: registered here once for every command
// that prices with the model's presets (model's subcommands, report html,
// step), so the flags read and mean the same everywhere.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "fabricbench/model/presets.hpp"

namespace fb::cli {

struct PresetFlags {
  std::string folder;              // --presets DIR: the whole set, the built-in one left out
  std::vector<std::string> added;  // --presets-add FILE, repeatable: laid over the set in order
};

void add_preset_flags(CLI::App* app, PresetFlags& f);

// The set a command prices with: built in (or --presets DIR), then `first`
// (a quotes file's `presets:`, "" for none), then each --presets-add file,
// so the command line has the last word.
model::Presets presets_of(const PresetFlags& f, const std::string& first = "");

// One line on stderr per preset the added files add or override
// ("fabricbench model: presets: my.yaml: gpu 'h100-sxm' overrides the built-in preset").
void say_preset_changes(std::string_view command, const model::Presets& p);

}  // namespace fb::cli
