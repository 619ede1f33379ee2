#include "number_flags.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace fb::cli {
namespace {

constexpr const char* kRuleName = "fabricbench-number";

// A text that does not read as a number is left to CLI11's conversion, which
// names the flag and the text.
std::string finite(std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || std::isfinite(v)) return {};
  return fmt::format("{} is not a finite number", text);
}

std::string not_negative(std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || v >= 0) return {};
  return fmt::format("{} is negative: the flag takes a count, a size, an index or an id, 0 or more", text);
}

bool has_rule(CLI::Option& opt) {
  try {
    opt.get_validator(kRuleName);
    return true;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

}  // namespace

void refuse_nonsense_numbers(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if ((type.rfind("FLOAT", 0) != 0 && type.rfind("INT", 0) != 0) || has_rule(*opt)) continue;
    const bool floating = type.rfind("FLOAT", 0) == 0;
    opt->check(CLI::Validator(floating ? finite : not_negative, "", kRuleName));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_nonsense_numbers(*sub);
}

}  // namespace fb::cli
