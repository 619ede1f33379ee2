#include "fabricbench/model/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

#include "fabricbench/core/csv.hpp"
#include "fabricbench/core/errors.hpp"

namespace fb::model {

Format parse_format(std::string_view text) {
  if (text == "text") return Format::text;
  if (text == "json") return Format::json;
  if (text == "csv") return Format::csv;
  throw UsageError(fmt::format("--format '{}': allowed: text, json, csv", text));
}

namespace {

bool numeric(const std::string& s) {
  if (s == "-" || s == "inf" || s == "none" || s == "measured") return true;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return !s.empty() && end != s.c_str();
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

std::string render_text(const Table& t) {
  // Columns of figures right-aligned, names left-aligned.
  std::vector<bool> right(t.header.size(), true);
  for (const auto& r : t.rows)
    for (std::size_t i = 0; i < r.size() && i < right.size(); ++i) right[i] = right[i] && numeric(r[i]);
  std::vector<std::string> head;
  for (const auto& key : t.header) head.push_back(text_head(key));
  std::vector<std::size_t> width(t.header.size(), 0);
  const auto widen = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  widen(head);
  for (const auto& r : t.rows) widen(r);
  std::string out;
  const auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
      const std::string sep = i == 0 ? "" : "  ";
      text += right[i] ? fmt::format("{}{:>{}}", sep, row[i], width[i]) : fmt::format("{}{:<{}}", sep, row[i], width[i]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line(head);
  for (const auto& r : t.rows) line(r);
  for (const auto& n : t.notes) out += "# " + n + "\n";
  return out;
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
