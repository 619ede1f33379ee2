#include "fabricbench/model/table.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>

#include "fabricbench/core/csv.hpp"
#include "fabricbench/core/errors.hpp"
#include "fabricbench/core/text_table.hpp"

namespace fb::model {

Format parse_format(std::string_view text) {
  if (text == "text") return Format::text;
  if (text == "json") return Format::json;
  if (text == "csv") return Format::csv;
  throw UsageError(fmt::format("--format '{}': allowed: text, json, csv", text));
}

namespace {

// A figure: a number, bare or with % or x after it. A name that starts with
// one ("10GbE", "400G IB") is not, and stays left-aligned with its column.
bool numeric(const std::string& s) {
  if (s == "-" || s == "inf" || s == "none" || s == "measured") return true;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str()) return false;
  const std::string_view rest(end);
  return rest.empty() || rest == "%" || rest == "x";
}

// A column's key as a person reads it: the unit its suffix names, spelt out
// in the head ("line_gbit" -> "line (Gbit/s)", "alpha_us" -> "alpha (us)"),
// GB/s for bytes per second and Gbit/s for line rates. CSV keeps the keys.
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kUnitSuffixes{{
    {"_gbps", "GB/s"}, {"_gbit", "Gbit/s"}, {"_us", "us"}, {"_s", "s"},
    {"_pct", "%"},     {"_gib", "GiB"},     {"_bytes", "bytes"},
}};

}  // namespace

std::string text_head(std::string_view key) {
  for (const auto& [suffix, unit] : kUnitSuffixes)
    if (key.size() > suffix.size() && key.ends_with(suffix))
      return fmt::format("{} ({})", key.substr(0, key.size() - suffix.size()), unit);
  return std::string(key);
}

// The keys' table as core's renderer prints it: figures right-aligned, names
// left-aligned, notes under it after "# ".
std::string render_text(const Table& t) {
  TextTable text;
  for (const auto& key : t.header) text.columns.push_back({.head = text_head(key), .align = Align::right});
  for (const auto& r : t.rows)
    for (std::size_t i = 0; i < r.size() && i < text.columns.size(); ++i)
      if (!numeric(r[i])) text.columns[i].align = Align::left;
  for (const auto& r : t.rows) text.add_row(r);
  text.notes = t.notes;
  return render(text);
}

// The project's one CSV quoting (core/csv.hpp), as `run --csv` writes it.
std::string render_csv(const Table& t) {
  std::string out = csv_row(t.header) + "\n";
  for (const auto& r : t.rows) out += csv_row(r) + "\n";
  return out;
}

std::string cell(double value, int decimals) {
  if (std::isinf(value)) return "inf";
  if (std::isnan(value)) return "-";
  return fmt::format("{:.{}f}", value, decimals);
}

std::string percent(double fraction) { return cell(100.0 * fraction, 1); }

}  // namespace fb::model
