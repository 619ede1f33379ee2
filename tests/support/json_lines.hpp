// The lines of a record file as the JSON on disk, for tests that check the
// text a command wrote (key order, what a line holds beside its typed view).
// Results gives only the typed lines.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace fb::test {

inline std::vector<nlohmann::ordered_json> json_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<nlohmann::ordered_json> out;
  for (std::string text; std::getline(in, text);)
    if (!text.empty()) out.push_back(nlohmann::ordered_json::parse(text));
  return out;
}

}  // namespace fb::test
