#include "fabricbench/model/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "fabricbench/core/errors.hpp"

namespace fb::model {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "400 Gb/s" into 400 and "Gb/s". Throws when there is no number.
std::pair<double, std::string_view> split_number(std::string_view text, std::string_view what,
                                                 std::string_view examples) {
  const std::string_view s = trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || !std::isfinite(value))
    throw UsageError(fmt::format("{} '{}': no number; write e.g. {}", what, text, examples));
  if (value < 0) throw UsageError(fmt::format("{} '{}': must not be negative; write e.g. {}", what, text, examples));
  return {value, trim(std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end)))};
}

}  // namespace

double parse_count(std::string_view text, std::string_view what) {
  const auto [value, unit] = split_number(text, what, "7B, 7e9, 300M or 2M");
  static constexpr std::array<std::pair<std::string_view, double>, 6> kScale{
      {{"", 1.0}, {"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"G", 1e9}, {"T", 1e12}}};
  for (const auto& [name, scale] : kScale)
    if (unit == name) return value * scale;
  throw UsageError(fmt::format("{} '{}': unknown suffix '{}'; write a count such as 7B, 7e9, 300M or 2M "
                               "(K, M, B or G, T are powers of 1000)",
                               what, text, unit));
}

double parse_fraction(std::string_view text, std::string_view what) {
  auto [value, unit] = split_number(text, what, "0.4 or 40%");
  if (unit == "%") {
    value /= 100.0;
  } else if (!unit.empty()) {
    throw UsageError(fmt::format("{} '{}': write a fraction such as 0.4 or 40%", what, text));
  }
  if (value > 1.0) throw UsageError(fmt::format("{} '{}': must be between 0 and 1 (or 0% and 100%)", what, text));
  return value;
}

double parse_number(std::string_view text, std::string_view what) {
  const auto [value, unit] = split_number(text, what, "a plain number");
  if (!unit.empty()) throw UsageError(fmt::format("{} '{}': expected a plain number, found '{}'", what, text, unit));
  return value;
}

}  // namespace fb::model
