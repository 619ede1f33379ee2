// A table of cells that prints as aligned text or as CSV; the model's
// commands build one per answer (JSON is built separately, with full numbers).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fb::model {

struct Table {
  // Keys with their unit as suffix (step_s, comm_pct, line_gbit): CSV's head
  // as is, the text table's with the unit spelt out ("step (s)").
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  // printed under the text table, left out of CSV
};

enum class Format { text, json, csv };
// "text", "json", "csv"; throws fb::UsageError naming --format.
Format parse_format(std::string_view text);

std::string render_text(const Table& table);
// "line_gbit" -> "line (Gbit/s)", "busbw_gbps" -> "busbw (GB/s)"; other keys as they are.
std::string text_head(std::string_view key);
std::string render_csv(const Table& table);

// Cell helpers: fixed decimals, and percentages of a fraction.
std::string cell(double value, int decimals);
std::string percent(double fraction);

}  // namespace fb::model
