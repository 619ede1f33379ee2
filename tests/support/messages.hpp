// Messages a user reads, held to reading as sentences (issue 35): the shapes
// that once made a message look like a bug.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "fabricbench/core/errors.hpp"

namespace fb::test {

// What in `text` reads as a bug, or "" when nothing does: empty parentheses
// or an empty list after a colon ("(scopes measured for it: )"), "no any", a
// figure printed as inf or nan, a percentage above 1000% ("+601677.4%").
// Each word of `echo` (the command line the user gave) is taken out first:
// repeating a user's "--time-budget nan" back is right.
std::string broken_message(const std::string& text, const std::string& echo = "");

// The message of the UsageError `f` throws, "" when it throws none.
template <typename F>
std::string refusal(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// The lines of `text` (a command's output) that hold `needle`.
inline std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

}  // namespace fb::test
