#include "preset_flags.hpp"

#include <cstdio>

namespace fb::cli {

void add_preset_flags(CLI::App* app, PresetFlags& f) {
  app->add_option("--presets", f.folder,
                  "folder with networks.yaml, nodes.yaml, gpus.yaml replacing the whole built-in set (default: built "
                  "in)");
  app->add_option("--presets-add", f.added,
                  "YAML file with any of networks:, nodes:, gpus: laid over the set, repeatable: an entry adds a "
                  "preset, or overrides the one of its name (and says so)")
      ->allow_extra_args(false);  // one file per --presets-add: a record after it stays a record
}

model::Presets presets_of(const PresetFlags& f, const std::string& first) {
  model::Presets p = f.folder.empty() ? model::builtin_presets() : model::load_presets(f.folder);
  if (!first.empty()) p = model::add_presets(std::move(p), first);
  for (const auto& file : f.added) p = model::add_presets(std::move(p), file);
  return p;
}

void say_preset_changes(std::string_view command, const model::Presets& p) {
  for (const auto& c : p.changes)
    std::fprintf(stderr, "fabricbench %.*s: presets: %s\n", static_cast<int>(command.size()), command.data(),
                 c.c_str());
}

}  // namespace fb::cli
