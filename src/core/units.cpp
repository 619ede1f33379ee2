#include "fabricbench/core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "fabricbench/core/errors.hpp"

namespace fb {
namespace {

struct RateUnit {
  std::string_view name;
  double gbps;  // GB/s per unit
};

// Bits divide by 8; "G" alone is the network world's "400G", "GbE" its "10GbE".
constexpr std::array<RateUnit, 30> kRateUnits{{
    {"G", 1.0 / 8},          {"GbE", 1.0 / 8},      {"b/s", 1e-9 / 8},      {"bit/s", 1e-9 / 8},
    {"Kb/s", 1e-6 / 8},      {"Kbit/s", 1e-6 / 8},  {"Mb/s", 1e-3 / 8},     {"Mbps", 1e-3 / 8},
    {"Mbit/s", 1e-3 / 8},    {"Gb/s", 1.0 / 8},     {"Gbps", 1.0 / 8},      {"Gbit/s", 1.0 / 8},
    {"Tb/s", 1e3 / 8},       {"Tbps", 1e3 / 8},     {"Tbit/s", 1e3 / 8},    {"B/s", 1e-9},
    {"KB/s", 1e-6},          {"kB/s", 1e-6},        {"MB/s", 1e-3},         {"MBps", 1e-3},
    {"GB/s", 1.0},           {"GBps", 1.0},         {"TB/s", 1e3},          {"TBps", 1e3},
    {"KiB/s", 1.024e-6},     {"MiB/s", 1.048576e-3}, {"GiB/s", 1.073741824}, {"TiB/s", 1099.511627776},
    {"Gbits/s", 1.0 / 8},    {"Mbits/s", 1e-3 / 8},
}};

constexpr std::string_view kSpellings = "400G, 400 Gb/s, 400Gbps or 400 Gbit/s (bits) or 50 GB/s (bytes)";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<double> rate_unit_gbps(std::string_view unit) {
  for (const auto& u : kRateUnits)
    if (unit == u.name) return u.gbps;
  return std::nullopt;
}

std::string rate_unit_problem(std::string_view unit) {
  if (unit.empty()) return "no unit (bits or bytes per second?)";
  if (rate_unit_gbps(unit)) return {};
  // Known but for its case: "gb/s", "GBPS". Which one was meant cannot be told.
  for (const auto& u : kRateUnits)
    if (lower(unit) == lower(u.name))
      return fmt::format("'{}' is ambiguous (bits or bytes per second? b = bits, B = bytes, case matters)", unit);
  if (unit.find("/s") == std::string_view::npos && (unit.back() == 'B' || unit.back() == 'b'))
    return fmt::format("'{}' is a size, not a rate", unit);
  return fmt::format("unknown unit '{}'", unit);
}

std::string_view rate_spellings() { return kSpellings; }

double parse_rate_gbps(std::string_view text, std::string_view what) {
  const std::string_view s = trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || !std::isfinite(value))
    throw UsageError(fmt::format("{} '{}': no number; write e.g. {}", what, text, kSpellings));
  if (value < 0) throw UsageError(fmt::format("{} '{}': must not be negative; write e.g. {}", what, text, kSpellings));
  const std::string_view unit = trim(std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end)));
  if (const auto scale = rate_unit_gbps(unit)) return value * *scale;
  throw UsageError(fmt::format("{} '{}': {}; write {}", what, text, rate_unit_problem(unit), kSpellings));
}

std::string format_line_rate(double gbps) { return fmt::format("{:.4g} Gbit/s", gbit_of(gbps)); }

}  // namespace fb
