// A table of cells that prints as aligned text or as CSV; the model's
// commands build one per answer (JSON is built separately, with full numbers).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fb::model {

struct Table {
  std::vector<std::string> header;  // units in the names: step_s, comm_pct
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  // printed under the text table, left out of CSV
};

enum class Format { text, json, csv };
// "text", "json", "csv"; throws fb::UsageError naming --format.
Format parse_format(std::string_view text);

std::string render_text(const Table& table);
std::string render_csv(const Table& table);

// Cell helpers: fixed decimals, and percentages of a fraction.
std::string cell(double value, int decimals);
std::string percent(double fraction);

}  // namespace fb::model
