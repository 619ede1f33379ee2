// The lines of a record file as the JSON on disk, for tests that check the
// text a command wrote (key order, what a line holds beside its typed view).
// Results gives only the typed lines. As the reader does, a last line that a
// crash or a kill cut is left out; a damaged line before it throws.
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
  for (std::string text; std::getline(in, text);) {
    if (text.empty()) continue;
    auto line = nlohmann::ordered_json::parse(text, nullptr, false);
    if (line.is_discarded()) {
      if (in.peek() == std::ifstream::traits_type::eof()) break;  // the cut last line
      throw std::runtime_error(path + ": a damaged line before the last: " + text.substr(0, 80));
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace fb::test
