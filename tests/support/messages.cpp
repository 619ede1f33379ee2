// broken_message (messages.hpp).
#include "messages.hpp"

#include <regex>
#include <sstream>
#include <string_view>

namespace fb::test {
namespace {

std::string without_words_of(std::string text, const std::string& echo) {
  std::istringstream words(echo);
  for (std::string w; words >> w;)
    for (std::size_t at = text.find(w); at != std::string::npos; at = text.find(w, at)) text.erase(at, w.size());
  return text;
}

}  // namespace

std::string broken_message(const std::string& text, const std::string& echo) {
  const std::string t = without_words_of(text, echo);
  struct Shape {
    std::regex pattern;
    const char* what;
  };
  static const Shape kShapes[] = {  // compiled once: the suite checks every message it sees
      {std::regex(R"(\(\s*\))"), "empty parentheses"},
      {std::regex(R"([:,]\s*\))"), "an empty list before ')'"},
      {std::regex(R"(\bno any\b)", std::regex::icase), "'no any'"},
      {std::regex(R"((^|[^A-Za-z_-])[+-]?(inf|nan)([^A-Za-z_]|$))", std::regex::icase),
       "a figure printed as inf or nan"},
  };
  for (const Shape& s : kShapes)
    if (std::regex_search(t, s.pattern)) return s.what;
  static const std::regex percent(R"(([0-9]+(?:\.[0-9]+)?)\s*%)");
  for (auto it = std::sregex_iterator(t.begin(), t.end(), percent); it != std::sregex_iterator(); ++it)
    if (std::stod((*it)[1].str()) > 1000) return "a percentage above 1000%: " + it->str();
  return "";
}

}  // namespace fb::test
