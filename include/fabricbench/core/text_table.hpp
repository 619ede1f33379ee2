// The project's one aligned text table: a head line, one line per row, notes
// under it. Column widths come from the widest cell (head included), at least
// a column's min_width and, where a caller clips, at most its max_width. The
// tables of model, check, diagnose, pairs, topo (GPU matrix, NICs, paths,
// differences), step, gemm and storage go through it; run's nccl-tests table
// does not (table_sink.cpp says why); CSV is core/csv.hpp's. Widths count
// bytes, as the tables did before: their cells are ASCII.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fb {

enum class Align { left, right };

struct TextColumn {
  std::string head;
  Align align = Align::left;  // names left, figures right
  // A fixed-width layout's width: the column is never narrower, so a table
  // keeps its shape when every cell is short (and a streamed row, which knows
  // no other rows, lines up with its head).
  std::size_t min_width = 0;
  // 0: no limit. Else a longer cell is cut to this width, its end replaced by
  // clip_mark ("" cuts it bare), so one long name cannot push every column.
  std::size_t max_width = 0;
  std::string clip_mark = "...";
  std::string gap = "  ";  // what separates it from the column before; unused for the first
};

struct TextRow {
  std::vector<std::string> cells;  // fewer than the columns: the line ends after the last
  std::string tail;                // free text after the last cell, not aligned
};

struct TextTable {
  std::vector<TextColumn> columns;
  std::vector<TextRow> rows;
  std::vector<std::string> notes;  // one line each under the table, after note_prefix
  // Before the head line and before each row: check's "# " head with rows
  // indented "  " to stay under it.
  std::string head_prefix;
  std::string row_prefix;
  std::string note_prefix = "# ";

  void add_row(std::vector<std::string> cells, std::string tail = {}) {
    rows.push_back({std::move(cells), std::move(tail)});
  }
};

// The whole table: head, rows, notes, each line ended by "\n", trailing spaces
// cut. Cells past the last column are not printed.
std::string render(const TextTable& table);

// Each column's printed width (head and clipped cells, at least min_width).
std::vector<std::size_t> column_widths(const TextTable& table);

// One line in a table whose rows arrive one at a time (storage prints each
// row as it is measured): a column is as wide as its head or its min_width.
std::string render_head_line(const std::vector<TextColumn>& columns, const std::string& prefix);
std::string render_row_line(const std::vector<TextColumn>& columns, const std::string& prefix,
                            const std::vector<std::string>& cells);

// A cell as a column prints it: clipped to max_width (see TextColumn).
std::string clip(const TextColumn& column, const std::string& cell);

}  // namespace fb
