#include "fabricbench/core/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fb {
namespace {

// A streamed table's widths: no rows to measure, so the head and min_width.
std::vector<std::size_t> fixed_widths(const std::vector<TextColumn>& columns) {
  std::vector<std::size_t> width;
  for (const auto& c : columns) width.push_back(std::max(c.min_width, clip(c, c.head).size()));
  return width;
}

// Spaces at a line's end are invisible and break copy-paste diffs; a
// left-aligned last cell or an empty right-aligned one leaves them.
std::string ended(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text + "\n";
}

std::string line(const std::vector<TextColumn>& columns, const std::vector<std::size_t>& width,
                 const std::string& prefix, const std::vector<std::string>& cells, const std::string& tail) {
  std::string text = prefix;
  for (std::size_t i = 0; i < cells.size() && i < columns.size(); ++i) {
    const TextColumn& c = columns[i];
    if (i > 0) text += c.gap;
    const std::string shown = clip(c, cells[i]);
    switch (c.align) {
      case Align::left:
        text += fmt::format("{:<{}}", shown, width[i]);
        break;
      case Align::right:
        text += fmt::format("{:>{}}", shown, width[i]);
        break;
    }
  }
  return ended(text + tail);
}

std::vector<std::string> heads(const std::vector<TextColumn>& columns) {
  std::vector<std::string> out;
  for (const auto& c : columns) out.push_back(c.head);
  return out;
}

}  // namespace

std::string clip(const TextColumn& column, const std::string& cell) {
  const std::size_t max = column.max_width;
  if (max == 0 || cell.size() <= max) return cell;
  if (column.clip_mark.size() >= max) return cell.substr(0, max);
  return cell.substr(0, max - column.clip_mark.size()) + column.clip_mark;
}

std::vector<std::size_t> column_widths(const TextTable& t) {
  std::vector<std::size_t> width;
  for (const auto& c : t.columns) width.push_back(c.min_width);
  const auto widen = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], clip(t.columns[i], cells[i]).size());
  };
  widen(heads(t.columns));
  for (const auto& r : t.rows) widen(r.cells);
  return width;
}

std::string render(const TextTable& t) {
  const std::vector<std::size_t> width = column_widths(t);
  std::string out = line(t.columns, width, t.head_prefix, heads(t.columns), "");
  for (const auto& r : t.rows) out += line(t.columns, width, t.row_prefix, r.cells, r.tail);
  for (const auto& n : t.notes) out += t.note_prefix + n + "\n";
  return out;
}

std::string render_head_line(const std::vector<TextColumn>& columns, const std::string& prefix) {
  return line(columns, fixed_widths(columns), prefix, heads(columns), "");
}

std::string render_row_line(const std::vector<TextColumn>& columns, const std::string& prefix,
                            const std::vector<std::string>& cells) {
  return line(columns, fixed_widths(columns), prefix, cells, "");
}

}  // namespace fb
